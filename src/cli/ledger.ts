// `npm run cli -- ledger check [--account acct_…]`: recomputes every balance from the journal and
// reports any difference (src/ledger/check.ts), as JSON on stdout. Exit code 0 when the ledger
// holds, 3 when it does not, 2 on a usage error, 1 when the check could not run.
import { parseArgs } from 'node:util';
import { parseId } from '../kernel/ids.js';
import { checkLedger } from '../ledger/check.js';
import { withDatabase, type CliIo } from './commands.js';

const USAGE =
  'Usage: npm run cli -- ledger check [--account ACCT_ID]\n\n' +
  'Recomputes every balance from the double-entry journal and compares: entries that do not sum to zero,\n' +
  'stored balances that differ from their lines, payments, refunds and payouts whose entries do not match\n' +
  'their status, pending balances that differ from their open settlements or money that became available\n' +
  'other than once. Prints a JSON report; exit code 0 when all holds, 3 when a difference is found.\n';

export async function runLedger(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h' || rest.includes('--help') || rest.includes('-h')) {
    (sub === undefined ? io.stderr : io.stdout)(USAGE);
    return sub === undefined ? 2 : 0;
  }
  if (sub !== 'check') {
    io.stderr(`error: unknown ledger subcommand ${JSON.stringify(sub)}\n${USAGE}`);
    return 2;
  }
  let accountId: string | undefined;
  try {
    const { values } = parseArgs({ args: rest, options: { account: { type: 'string' } }, strict: true, allowPositionals: false });
    if (values.account !== undefined) {
      accountId = parseId('acct', values.account);
      if (!accountId) throw new Error(`--account must be an account id (acct_…), got ${JSON.stringify(values.account)}`);
    }
  } catch (err) {
    io.stderr(`error: ${(err as Error).message.split('\n')[0]}\n${USAGE}`);
    return 2;
  }
  try {
    const report = await withDatabase(io, (database) => checkLedger(database.db, { accountId }));
    io.stdout(JSON.stringify(report, null, 2) + '\n');
    if (!report.ok) io.stderr('error: the ledger does not hold; see the report\n');
    return report.ok ? 0 : 3;
  } catch (err) {
    io.stderr(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
