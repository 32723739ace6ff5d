// REQUEST_BODY_TIMEOUT_MS: a request body that stops arriving is answered `408 request_timeout`
// and its connection closed, so a client announcing a large body and sending none of it cannot hold
// a connection (and its request) open forever. The deadline is the longest time without progress,
// not a bound on the whole body, so a large body arriving steadily over a slow link is never cut.
// REQUEST_BODY_MIN_RATE closes the gap silence leaves: a body trickling in (a byte a second never
// falls silent) is answered the same way once, over the last deadline-long window, fewer than the
// minimum rate's bytes per second arrived. Only whole windows are judged, so a body that completes
// within one deadline is never held to the rate.
//
// Progress is read from the socket's byte count, sampled four times per deadline by one timer for
// the whole server: no work per chunk. The clock runs only while the server waits on the client:
// not while body bytes sit unread on our side, nor while the request's hooks (authentication) run
// before the body is read — that wait is ours.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { ApiError } from '../kernel/errors.js';

interface Sample {
  at: number;
  bytesRead: number;
}

interface Pending {
  res: ServerResponse;
  bytesRead: number;
  /** When the client last sent something, or when we last kept it waiting. */
  progressAt: number;
  /** The socket's byte count at each sweep since the client's time began, oldest first, trimmed to one window. */
  samples: Sample[];
  /** The 408 is on its way: one more deadline for it, then the socket is closed regardless. */
  told?: boolean;
}

/** Whether the request announces a body (a Content-Length above 0, or a chunked one). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

export interface BodyLimits {
  /** REQUEST_BODY_TIMEOUT_MS: the longest silence, and the window the rate is measured over. */
  timeoutMs: number;
  /** REQUEST_BODY_MIN_RATE, bytes per second; 0: no rate rule. */
  minRate: number;
}

/**
 * Why the client is too slow, if it is: fewer than `minRate` bytes a second over the last whole
 * window. Records this sweep's sample and forgets those a later one makes unneeded.
 */
function tooSlow(entry: Pending, now: number, { timeoutMs, minRate }: BodyLimits): string | undefined {
  const { samples } = entry;
  samples.push({ at: now, bytesRead: entry.bytesRead });
  while (samples.length > 1 && now - samples[1]!.at >= timeoutMs) samples.shift();
  const oldest = samples[0]!;
  const elapsed = now - oldest.at;
  if (minRate === 0 || elapsed < timeoutMs) return undefined;
  const arrived = entry.bytesRead - oldest.bytesRead;
  if (arrived * 1000 >= minRate * elapsed) return undefined;
  return `The request body arrived too slowly: ${arrived} bytes in ${elapsed} ms, below the minimum of ${minRate} bytes per second; the connection was closed.`;
}

/** Watches every request body the server receives; the returned function stops watching. */
export function watchRequestBodies(server: Server, limits: BodyLimits): () => void {
  const { timeoutMs } = limits;
  const pending = new Map<IncomingMessage, Pending>();
  // Runs only while some body is pending, so an idle server (or one driven by inject) has no timer.
  let timer: NodeJS.Timeout | undefined;
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!hasBody(req) || req.complete) return;
    const start = { at: Date.now(), bytesRead: req.socket.bytesRead };
    pending.set(req, { res, bytesRead: start.bytesRead, progressAt: start.at, samples: [start] });
    // Forgotten as soon as it is answered with its body read: under load, finished requests held
    // until the next sweep would pile up by the thousand and every sweep would walk them. One
    // answered without reading its body stays watched: the client may never send the rest.
    res.once('finish', () => {
      if (req.complete) pending.delete(req);
    });
    if (!timer) {
      timer = setInterval(sweep, Math.max(10, Math.floor(timeoutMs / 4)));
      timer.unref();
    }
  });

  const sweep = () => {
    const now = Date.now();
    for (const [req, entry] of pending) {
      const { socket } = req;
      if (req.complete || socket.destroyed) {
        pending.delete(req);
        continue;
      }
      // fastify's body reader (rawBody, in its content-type parser) is the only 'error' listener a request gets.
      const reading = req.listenerCount('error') > 0;
      const answered = entry.res.headersSent;
      const ours = !entry.told && (req.readableLength > 0 || (!reading && !answered));
      if (socket.bytesRead !== entry.bytesRead || ours) {
        entry.bytesRead = socket.bytesRead;
        entry.progressAt = now;
      }
      // Our wait restarts the rate's window: only the client's own time is held against it.
      if (ours) entry.samples = [{ at: now, bytesRead: entry.bytesRead }];
      const slow = ours || entry.told ? undefined : tooSlow(entry, now, limits);
      if (!slow && now - entry.progressAt < timeoutMs) continue;
      // Read by fastify: its body reader fails with our error, and the error handler answers the
      // typed 408 (with the request's id and log line); `connection: close` then closes the socket.
      // Already answered, or told and still open: nothing more can be said, the connection is closed.
      if (!entry.told && reading && !answered) {
        entry.told = true;
        entry.progressAt = now;
        const message = slow ?? `The request body stopped arriving: nothing came for ${timeoutMs} ms; the connection was closed.`;
        req.emit('error', new ApiError('request_timeout', { message, headers: { connection: 'close' } }));
      } else {
        pending.delete(req);
        socket.destroy();
      }
    }
    if (pending.size === 0) stop();
  };
  const stop = () => {
    clearInterval(timer);
    timer = undefined;
  };
  return stop;
}
