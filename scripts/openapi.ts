// Prints (or writes with --out FILE) the OpenAPI document generated from the route schemas,
// exactly as the running service serves it at /v1/openapi.json.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { servedDocument } from './served-document.js';

const { values } = parseArgs({ options: { out: { type: 'string' } } });
const document = JSON.stringify(await servedDocument(), null, 2) + '\n';
if (values.out) fs.writeFileSync(values.out, document);
else process.stdout.write(document);
