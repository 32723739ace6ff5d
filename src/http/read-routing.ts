// Which reads of a request a replica may answer, and whose writes it must have replayed first
// (src/storage/read-replica.ts). The writer is the API key, or the dashboard session, behind the
// request: a request of its that may write (any method but GET and HEAD) pins its reads to the
// primary from its arrival until the primary's position after it is known.
import type { FastifyRequest } from 'fastify';
import type { App } from './types.js';
import type { Db } from '../storage/db.js';
import { primaryReads, type ReadRouting } from '../storage/read-replica.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Whose writes this request's reads must see: `key:<id>` or `session:<id>`; undefined for public routes. */
    writer: string | undefined;
    /** Runs a list's read where it may go (the replica or the primary); never fails because of the replica. */
    read<T>(run: (db: Db) => Promise<T>): Promise<T>;
    /** Names the writer behind the request, once authenticated. */
    identifyWriter(writer: string): void;
  }
}

const writes = (req: FastifyRequest) => req.method !== 'GET' && req.method !== 'HEAD';

export function registerReadRouting(app: App, reads: ReadRouting | undefined, primary: Db): void {
  const routing = reads ?? primaryReads(primary);
  app.decorateRequest('writer', undefined);
  app.decorateRequest('read', function read<T>(this: FastifyRequest, run: (db: Db) => Promise<T>) {
    return routing.read(this.writer, run);
  });
  app.decorateRequest('identifyWriter', function identifyWriter(this: FastifyRequest, writer: string) {
    this.writer = writer;
    if (writes(this)) routing.writeStarted(writer);
  });
  const ended = new WeakSet<FastifyRequest>();
  const end = async (req: FastifyRequest) => {
    if (req.writer === undefined || !writes(req) || ended.has(req)) return;
    ended.add(req);
    routing.writeEnded(req.writer);
  };
  app.addHook('onResponse', end);
  // A request whose client went away may never send its response: ended here, its writer is not
  // kept on the primary for good (the client saw no outcome to read back).
  app.addHook('onRequestAbort', end);
}
