// Which reads of a request a replica may answer, and whose writes it must have replayed first
// (src/storage/read-replica.ts). The writer is the API key, or the dashboard session, behind the
// request: a request of its that may write (any method but GET and HEAD, and a GET whose route says
// it writes: config.writes) pins its reads to the primary from its arrival until the primary's
// position after its handler has finished is known.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { App } from './types.js';
import type { Db } from '../storage/db.js';
import { primaryReads, type ReadRouting } from '../storage/read-replica.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A GET that writes all the same for this request (a retrieve that asks the processor first). */
    writes?: (req: FastifyRequest) => boolean;
  }
  interface FastifyRequest {
    /** Whose writes this request's reads must see: `key:<id>` or `session:<id>`; undefined for public routes. */
    writer: string | undefined;
    /** Runs a list's read where it may go (the replica or the primary); never fails because of the replica. */
    read<T>(run: (db: Db) => Promise<T>): Promise<T>;
    /** Names the writer behind the request, once authenticated. */
    identifyWriter(writer: string): void;
  }
}

const writes = (req: FastifyRequest) => (req.method !== 'GET' && req.method !== 'HEAD') || req.routeOptions.config.writes?.(req) === true;

export function registerReadRouting(app: App, reads: ReadRouting | undefined, primary: Db): void {
  const routing = reads ?? primaryReads(primary);
  app.decorateRequest('writer', undefined);
  app.decorateRequest('read', function read<T>(this: FastifyRequest, run: (db: Db) => Promise<T>) {
    return routing.read(this.writer, run);
  });
  // Decided once, when the writer is named: each write started is ended once.
  const writing = new WeakSet<FastifyRequest>();
  const ended = new WeakSet<FastifyRequest>();
  const running = new WeakSet<FastifyRequest>();
  const closed = new WeakSet<FastifyRequest>();
  app.decorateRequest('identifyWriter', function identifyWriter(this: FastifyRequest, writer: string) {
    this.writer = writer;
    if (!routing.followsWrites || !writes(this)) return;
    writing.add(this);
    routing.writeStarted(writer);
  });
  const end = (req: FastifyRequest) => {
    if (!writing.has(req) || ended.has(req) || running.has(req)) return;
    ended.add(req);
    routing.writeEnded(req.writer!);
  };
  // Without a replica every read is the primary's: no write needs following, and the hot path
  // (payments, orders) carries none of the hooks below.
  if (!routing.followsWrites) return;
  // A write ends when its response is closed and its handler is done, whichever comes last. A
  // client that goes away closes the response early (with no onResponse, nor always an
  // onRequestAbort), while the handler runs on and may commit after a processor call: until it
  // returns, its writer's lists stay on the primary.
  app.addHook('onRequest', async (req, reply) => {
    reply.raw.once('close', () => {
      closed.add(req);
      end(req);
    });
  });
  app.addHook('onResponse', async (req) => end(req));
  app.addHook('onRoute', (route) => {
    const handler = route.handler;
    route.handler = function handled(this: FastifyInstance, req, reply) {
      if (writing.has(req) && ended.has(req)) {
        // Closed before its handler began (which it does all the same): pinned again for its run.
        ended.delete(req);
        routing.writeStarted(req.writer!);
      }
      running.add(req);
      const done = () => {
        running.delete(req);
        if (closed.has(req)) end(req);
      };
      let result: unknown;
      try {
        result = handler.call(this, req, reply);
      } catch (err) {
        done();
        throw err;
      }
      if (!(result instanceof Promise)) {
        done();
        return result;
      }
      return result.finally(done);
    } as typeof handler;
  });
}
