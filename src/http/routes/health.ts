import { sql } from 'drizzle-orm';
import { Type } from 'typebox';
import type { App } from '../types.js';
import type { Database } from '../../storage/db.js';
import { ApiError } from '../../kernel/errors.js';
import { databaseUnavailableError } from '../../kernel/outage.js';
import type { Lifecycle } from '../lifecycle.js';
import { settlesBy } from '../../kernel/deadline.js';
import { newId } from '../../kernel/ids.js';

/** The probes' answer, described for the API reference. */
const status = (description: string) => Type.Object({ status: Type.String() }, { description });

/** A probe must answer in time even when the database has gone silent (a network partition). */
const READY_PROBE_TIMEOUT_MS = 2000;

export function registerHealthRoutes(app: App, database: Database, lifecycle: Lifecycle) {
  app.get(
    '/health',
    { config: { auth: false }, schema: { tags: ['health'], operationId: 'health', summary: 'Liveness: the process answers.', security: [], response: { 200: status('The process is alive: `{"status": "ok"}`.') } } },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/ready',
    {
      config: { auth: false },
      schema: {
        tags: ['health'],
        operationId: 'ready',
        summary: 'Readiness: the database answers and the process is not shutting down.',
        security: [],
        response: { 200: status('Ready to serve: `{"status": "ready"}`.'), 503: Type.Ref('Error') },
      },
    },
    async () => {
      await checkReady(database, lifecycle);
      return { status: 'ready' };
    },
  );
}

/** Readiness: resolves when this instance may be sent work, else throws the typed 503 saying why. */
export async function checkReady(database: Database, lifecycle: Lifecycle): Promise<void> {
  if (lifecycle.state !== 'serving') {
    throw new ApiError('service_unavailable', { message: 'This instance is shutting down.', headers: { 'retry-after': '1' } });
  }
  const probe = database.db.execute(sql`SELECT 1`).then(() => true, () => false);
  const answered = (await settlesBy(probe, Date.now() + READY_PROBE_TIMEOUT_MS)) && (await probe);
  if (!answered) throw databaseUnavailableError();
}

/**
 * /health and /ready for a listener that is not the API's (the metrics listener, which a
 * worker-only process has and the API port it lacks): the same answers, as status and JSON body.
 */
export function probeAnswers(database: Database, lifecycle: Lifecycle) {
  return async (path: string): Promise<{ status: number; body: string; headers?: Record<string, string> } | undefined> => {
    if (path === '/health') return { status: 200, body: JSON.stringify({ status: 'ok' }) };
    if (path !== '/ready') return undefined;
    try {
      await checkReady(database, lifecycle);
      return { status: 200, body: JSON.stringify({ status: 'ready' }) };
    } catch (err) {
      const error = err instanceof ApiError ? err : new ApiError('service_unavailable');
      return { status: error.status, body: JSON.stringify(error.body(newId('req').id)), headers: error.headers };
    }
  };
}
