// Raw sockets for the tests: a port nobody listens on, and requests that fetch refuses to send.
import net from 'node:net';
import type { ApiResponse } from './helpers.js';

/** A loopback port free a moment ago, its listener closed: nothing answers there until a test binds it. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Sends `head` (request line and headers, CRLF-separated, without the blank line) and `body` as
 * raw bytes over a fresh TCP connection and parses the one answer: for what fetch refuses to send
 * (malformed %-escapes, NUL or DEL in a header, overlong headers).
 */
export async function rawRequest(baseUrl: string, head: string, body = ''): Promise<ApiResponse> {
  return (await rawExchange(baseUrl, head, [body])).answer;
}

/**
 * Like rawRequest, with the body sent as `parts`, one every `gapMs` (a slow or stalled client).
 * Resolves when the answer is complete (`until: 'answer'`) or when the server closes the
 * connection (`'close'`), with the milliseconds from the first byte sent.
 */
export async function rawExchange(
  baseUrl: string,
  head: string,
  parts: string[],
  opts: { gapMs?: number; until?: 'answer' | 'close'; timeoutMs?: number } = {},
): Promise<{ answer: ApiResponse; afterMs: number }> {
  const { hostname, port } = new URL(baseUrl);
  const started = performance.now();
  // Not half-closed after writing: Node's server drops a request whose client sent FIN first. The
  // answer is complete at its Content-Length, or when the server closes.
  const raw = await new Promise<Buffer>((resolve, reject) => {
    let received = Buffer.alloc(0);
    const timers: NodeJS.Timeout[] = [];
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(Buffer.from(`${head}\r\n\r\n${parts[0] ?? ''}`, 'latin1'));
      parts.slice(1).forEach((part, i) => timers.push(setTimeout(() => socket.writable && socket.write(Buffer.from(part, 'latin1')), (i + 1) * (opts.gapMs ?? 0))));
    });
    socket.setTimeout(opts.timeoutMs ?? 10_000, () => socket.destroy(new Error(`no answer to ${JSON.stringify(head.slice(0, 200))}`)));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(received.subarray(0, end).toString('latin1'))?.[1];
      if (opts.until !== 'close' && end >= 0 && length !== undefined && received.length >= end + 4 + Number(length)) socket.destroy();
    });
    socket.on('error', reject);
    socket.on('close', () => {
      for (const timer of timers) clearTimeout(timer);
      resolve(received);
    });
  });
  const afterMs = performance.now() - started;
  const text = raw.toString('utf8');
  const split = text.indexOf('\r\n\r\n');
  const [statusLine, ...headerLines] = text.slice(0, split < 0 ? text.length : split).split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '')?.[1]);
  const headers = new Headers();
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  const payload = split < 0 ? '' : text.slice(split + 4);
  let parsed: unknown;
  try {
    parsed = payload ? JSON.parse(payload) : undefined;
  } catch {
    parsed = undefined;
  }
  return { answer: { status, headers, body: parsed, text: `${statusLine}\n${payload}` }, afterMs };
}

/** A loopback port nobody listens on: connections to it are refused. */
export const closedPort = freePort;
