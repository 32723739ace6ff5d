// `npm run cli -- reconcile --connector-account ca_… [--file report.csv] [--period-start T] [--period-end T]`:
// a reconciliation run through the API (docs/reconciliation.md), as an integrator would make it. With
// --file, the file (Adyen's Settlement details report) is streamed as the text/csv body, never read
// whole into memory here; without, the connector account's records are fetched by the service.
// Prints the run as JSON; exit code 0 when it has no exceptions, 3 when it has, 2 on a usage error,
// 1 when the API refused it.
import fs from 'node:fs';
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { UsageError, apiTarget } from './args.js';
import type { CliIo } from './commands.js';

const USAGE =
  'usage: API_KEY=sk_… npm run cli -- reconcile --connector-account CA_ID [--file REPORT.csv] [--period-start T] [--period-end T] [--api-url URL]\n' +
  '  --connector-account  the connector account (ca_…) whose records are compared with the ledger\n' +
  "  --file               Adyen's Settlement details report (CSV); without it the records are fetched (Stripe, simulators)\n" +
  '  --period-start/-end  RFC 3339 timestamps (default: the report\'s dates, or the last 24 hours)\n' +
  '  --api-key            the key to act with (default: $API_KEY)\n' +
  '  --api-url            the service (default: $API_URL or http://127.0.0.1:3000)\n';

export async function runReconcile(argv: string[], io: CliIo): Promise<number> {
  let values;
  try {
    if (argv.includes('--help') || argv.includes('-h')) return (io.stdout(USAGE), 0);
    ({ values } = parseArgs({
      args: argv,
      options: { 'connector-account': { type: 'string' }, file: { type: 'string' }, 'period-start': { type: 'string' }, 'period-end': { type: 'string' }, 'api-key': { type: 'string' }, 'api-url': { type: 'string' } },
      strict: true,
      allowPositionals: false,
    }));
    if (!values['connector-account']) throw new UsageError('--connector-account is required');
  } catch (err) {
    io.stderr(`error: ${String((err as Error).message).split('\n')[0]}\n${USAGE}`);
    return 2;
  }
  let target;
  try {
    target = apiTarget(values, io.env);
  } catch (err) {
    io.stderr(`error: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const period = { ...(values['period-start'] ? { period_start: values['period-start'] } : {}), ...(values['period-end'] ? { period_end: values['period-end'] } : {}) };
  const headers: Record<string, string> = { authorization: `Bearer ${target.apiKey}`, 'idempotency-key': `cli-reconcile-${crypto.randomUUID()}` };
  let url = `${target.apiUrl}/v1/reconciliation-runs`;
  let body: BodyInit;
  if (values.file) {
    if (!fs.existsSync(values.file)) return (io.stderr(`error: no file ${values.file}\n`), 2);
    url += `?${new URLSearchParams({ connector_account: values['connector-account'], ...period })}`;
    headers['content-type'] = 'text/csv';
    body = Readable.toWeb(fs.createReadStream(values.file)) as unknown as BodyInit;
  } else {
    headers['content-type'] = 'application/json';
    body = JSON.stringify({ connector_account: values['connector-account'], ...period });
  }
  try {
    const res = await fetch(url, { method: 'POST', headers, body, duplex: 'half' } as RequestInit);
    const text = await res.text();
    if (res.status !== 201) {
      io.stderr(`error: the API answered ${res.status}: ${text}\n`);
      return 1;
    }
    io.stdout(JSON.stringify(JSON.parse(text), null, 2) + '\n');
    return (JSON.parse(text) as { exceptions: unknown[] }).exceptions.length === 0 ? 0 : 3;
  } catch (err) {
    io.stderr(`error: ${(err as Error).message}\n`);
    return 1;
  }
}
