import { sql } from 'drizzle-orm';
import { Type } from 'typebox';
import type { App } from '../types.js';
import type { Database } from '../../storage/db.js';
import { ApiError } from '../../kernel/errors.js';

const Status = Type.Object({ status: Type.String() });

export function registerHealthRoutes(app: App, database: Database) {
  app.get(
    '/health',
    { config: { auth: false }, schema: { tags: ['health'], operationId: 'health', summary: 'Liveness: the process answers.', security: [], response: { 200: Status } } },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/ready',
    {
      config: { auth: false },
      schema: { tags: ['health'], operationId: 'ready', summary: 'Readiness: the database answers.', security: [], response: { 200: Status, 503: Type.Ref('Error') } },
    },
    async () => {
      try {
        await database.db.execute(sql`SELECT 1`);
      } catch {
        throw new ApiError('service_unavailable', { message: 'The database is not reachable.' });
      }
      return { status: 'ready' };
    },
  );
}
