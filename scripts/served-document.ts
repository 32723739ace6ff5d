// The OpenAPI document exactly as the running service serves it at /v1/openapi.json, built from
// the route schemas on an in-memory database.
import { loadConfig } from '../src/config.js';
import { openPglite } from '../src/storage/db.js';
import { buildApp } from '../src/http/app.js';
import { createAuthenticator } from '../src/http/auth.js';
import { MemoryRateLimiter } from '../src/http/rate-limiter.js';

export async function servedDocument(): Promise<object> {
  const database = await openPglite(undefined);
  try {
    const app = await buildApp({
      config: loadConfig({}),
      database,
      rateLimiter: new MemoryRateLimiter(),
      authenticator: createAuthenticator(database.db, 0),
      logger: false,
    });
    await app.ready();
    const document = app.swagger() as object;
    await app.close();
    return document;
  } finally {
    await database.close();
  }
}
