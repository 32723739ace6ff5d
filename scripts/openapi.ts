// Prints (or writes with --out FILE) the OpenAPI document generated from the route schemas,
// exactly as the running service serves it at /v1/openapi.json.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.js';
import { openPglite } from '../src/storage/db.js';
import { buildApp } from '../src/http/app.js';
import { createAuthenticator } from '../src/http/auth.js';
import { MemoryRateLimiter } from '../src/lib/rate-limiter.js';

const { values } = parseArgs({ options: { out: { type: 'string' } } });
const database = await openPglite(undefined);
const config = loadConfig({});
const app = await buildApp({
  config,
  database,
  rateLimiter: new MemoryRateLimiter(),
  authenticator: createAuthenticator(database.db, 0),
  logger: false,
});
await app.ready();
const document = JSON.stringify(app.swagger(), null, 2) + '\n';
if (values.out) fs.writeFileSync(values.out, document);
else process.stdout.write(document);
await app.close();
await database.close();
