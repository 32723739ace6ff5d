// The operator's command line: migrations, accounts (onboarding, live activation, suspension, rate
// budgets) and API keys (issue, list, revoke, roll). It opens the same database as the service and
// calls the same domain functions; results are JSON on stdout, errors `error: ...` on stderr.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import { DataDirLockedError, openDatabase, runMigrations, type Db } from '../storage/db.js';
import {
  OnboardingError,
  activateLive,
  createAccount,
  getAccount,
  issueKey,
  listAccounts,
  listKeys,
  reinstateAccount,
  revokeKey,
  rollKey,
  setPayoutSettings,
  setRateLimit,
  suspendAccount,
} from '../domain/accounts/service.js';
import { MAX_AMOUNT } from '../lib/currencies.js';
import { UsageError, parseRfc3339, requireFuture, requireId, requireInteger, requireText } from './args.js';

type OptionSpec = { type: 'string' | 'boolean'; short?: string };
type Values = Record<string, string | boolean | undefined>;

interface Prepared {
  /** Runs against the open (and migrated) database; the answer is printed as JSON. */
  run(db: Db): Promise<unknown>;
  /** Lines for people, printed on stderr after the result so stdout stays parseable JSON. */
  notes?(result: any): string[];
}

interface Command {
  name: string;
  /** Positional arguments and options, as shown in the usage line. */
  synopsis: string;
  summary: string;
  details?: string;
  positionals: string[];
  options: Record<string, OptionSpec>;
  /** Validates everything and returns the work to do; never touches the database. */
  prepare(input: { values: Values; positionals: string[]; now: Date }): Prepared;
}

const PROGRAM = 'npm run cli --';
const DAY_S = 24 * 3600;
const MAX_ROLL_S = 365 * DAY_S;
const MAX_RATE = 1_000_000;
const CACHE_NOTE =
  'a running service applies this within its API-key cache TTL (API_KEY_CACHE_TTL_MS, default 5000 ms)';

const str = (values: Values, name: string) => values[name] as string | undefined;

const COMMANDS: Command[] = [
  {
    name: 'migrate',
    synopsis: '',
    summary: 'Apply pending database migrations and exit',
    details: 'Every other command applies pending migrations too, so a fresh database works straight away.',
    positionals: [],
    options: {},
    prepare: () => ({ run: async () => ({ migrated: true }) }),
  },
  {
    name: 'accounts create',
    synopsis: '--name NAME',
    summary: 'Create an account (test mode only until activate-live)',
    positionals: [],
    options: { name: { type: 'string' } },
    prepare({ values }) {
      const name = str(values, 'name');
      if (name === undefined) throw new UsageError('--name is required');
      const checked = requireText('name', name);
      return { run: (db) => createAccount(db, checked) };
    },
  },
  {
    name: 'accounts list',
    synopsis: '',
    summary: 'List every account, newest first',
    positionals: [],
    options: {},
    prepare: () => ({ run: (db) => listAccounts(db) }),
  },
  {
    name: 'accounts show',
    synopsis: 'ACCT_ID',
    summary: 'Show one account',
    positionals: ['ACCT_ID'],
    options: {},
    prepare: ({ positionals: [id] }) => ({ run: (db) => getAccount(db, id!) }),
  },
  {
    name: 'accounts activate-live',
    synopsis: 'ACCT_ID',
    summary: 'Enable live mode (onboarding done): live keys can then be issued',
    positionals: ['ACCT_ID'],
    options: {},
    prepare: ({ positionals: [id] }) => ({
      run: (db) => activateLive(db, id!),
      notes: () => [`live keys can now be issued: ${PROGRAM} keys create ${id} --mode live`],
    }),
  },
  {
    name: 'accounts suspend',
    synopsis: 'ACCT_ID',
    summary: 'Suspend an account: every one of its keys answers 403 account_suspended',
    positionals: ['ACCT_ID'],
    options: {},
    prepare: ({ positionals: [id] }) => ({ run: (db) => suspendAccount(db, id!), notes: () => [CACHE_NOTE] }),
  },
  {
    name: 'accounts reinstate',
    synopsis: 'ACCT_ID',
    summary: 'Lift a suspension',
    positionals: ['ACCT_ID'],
    options: {},
    prepare: ({ positionals: [id] }) => ({ run: (db) => reinstateAccount(db, id!), notes: () => [CACHE_NOTE] }),
  },
  {
    name: 'accounts set-rate-limit',
    synopsis: 'ACCT_ID (--per-second N --burst N | --default)',
    summary: "Give an account's keys their own token-bucket budget, or return to the defaults",
    details:
      `--per-second is the refill rate and --burst the bucket size (both 1..${MAX_RATE}); each key of the\n` +
      'account gets this budget. --default clears it, so the configured RATE_LIMIT_* defaults apply again.',
    positionals: ['ACCT_ID'],
    options: { 'per-second': { type: 'string' }, burst: { type: 'string' }, default: { type: 'boolean' } },
    prepare({ values, positionals: [id] }) {
      const perSecond = str(values, 'per-second');
      const burst = str(values, 'burst');
      let budget: { perSecond: number; burst: number } | null;
      if (values.default) {
        if (perSecond !== undefined || burst !== undefined) throw new UsageError('--default cannot be combined with --per-second or --burst');
        budget = null;
      } else {
        if (perSecond === undefined || burst === undefined) {
          throw new UsageError('--per-second and --burst are both required (or --default to return to the configured defaults)');
        }
        budget = { perSecond: requireInteger('per-second', perSecond, 1, MAX_RATE), burst: requireInteger('burst', burst, 1, MAX_RATE) };
      }
      return { run: (db) => setRateLimit(db, id!, budget), notes: () => [CACHE_NOTE] };
    },
  },
  {
    name: 'accounts set-payouts',
    synopsis: 'ACCT_ID [--enabled true|false] [--max-amount N|none]',
    summary: "Turn live-mode payouts on or off and set the account's largest single payout",
    details:
      '--enabled decides whether live keys may create payouts (off until onboarding turns it on; test mode always\n' +
      `has payouts). --max-amount caps one payout, in the minor unit of its currency (1..${MAX_AMOUNT}), in both modes;\n` +
      '`none` removes the cap. Options left out keep their value. Applies to the next payout request.',
    positionals: ['ACCT_ID'],
    options: { enabled: { type: 'string' }, 'max-amount': { type: 'string' } },
    prepare({ values, positionals: [id] }) {
      const enabled = str(values, 'enabled');
      const max = str(values, 'max-amount');
      if (enabled === undefined && max === undefined) throw new UsageError('give --enabled, --max-amount or both');
      if (enabled !== undefined && enabled !== 'true' && enabled !== 'false') {
        throw new UsageError(`--enabled must be true or false, got ${JSON.stringify(enabled)}`);
      }
      const settings = {
        liveEnabled: enabled === undefined ? undefined : enabled === 'true',
        maxAmount: max === undefined ? undefined : max === 'none' ? null : requireInteger('max-amount', max, 1, MAX_AMOUNT),
      };
      return { run: (db) => setPayoutSettings(db, id!, settings) };
    },
  },
  {
    name: 'keys create',
    synopsis: 'ACCT_ID --mode test|live [--name NAME] [--expires-at RFC3339]',
    summary: 'Issue an API key; the secret is printed once and stored only as a hash',
    details: 'Live keys can be issued only after `accounts activate-live`.',
    positionals: ['ACCT_ID'],
    options: { mode: { type: 'string' }, name: { type: 'string' }, 'expires-at': { type: 'string' } },
    prepare({ values, positionals: [id], now }) {
      const mode = str(values, 'mode');
      if (mode === undefined) throw new UsageError('--mode is required (test or live)');
      if (mode !== 'test' && mode !== 'live') throw new UsageError(`--mode must be test or live, got ${JSON.stringify(mode)}`);
      const name = str(values, 'name');
      const expiresAtRaw = str(values, 'expires-at');
      const opts = {
        livemode: mode === 'live',
        name: name === undefined ? undefined : requireText('name', name, 100),
        expiresAt: expiresAtRaw === undefined ? undefined : requireFuture('expires-at', parseRfc3339('expires-at', expiresAtRaw), now),
      };
      return {
        run: (db) => issueKey(db, id!, opts),
        notes: () => ['the secret is shown only this once and stored only as a hash: keep it somewhere safe now'],
      };
    },
  },
  {
    name: 'keys list',
    synopsis: 'ACCT_ID',
    summary: "List an account's keys (redacted; secrets are never shown again)",
    positionals: ['ACCT_ID'],
    options: {},
    prepare: ({ positionals: [id] }) => ({ run: (db) => listKeys(db, id!) }),
  },
  {
    name: 'keys revoke',
    synopsis: 'KEY_ID',
    summary: 'Revoke a key: it answers 401 api_key_invalid from then on',
    positionals: ['KEY_ID'],
    options: {},
    prepare: ({ positionals: [id] }) => ({ run: (db) => revokeKey(db, id!), notes: () => [CACHE_NOTE] }),
  },
  {
    name: 'keys roll',
    synopsis: 'KEY_ID [--expires-in SECONDS | --expires-at RFC3339]',
    summary: 'Issue a replacement key; the old one keeps working until the chosen time (default 24 hours)',
    details:
      `--expires-in 0 retires the old key at once. The old key's validity is at most ${MAX_ROLL_S / DAY_S} days, and never\n` +
      'longer than an expiry it already had. The new key has the same mode and name; its secret is printed once.',
    positionals: ['KEY_ID'],
    options: { 'expires-in': { type: 'string' }, 'expires-at': { type: 'string' } },
    prepare({ values, positionals: [id], now }) {
      const expiresIn = str(values, 'expires-in');
      const expiresAt = str(values, 'expires-at');
      if (expiresIn !== undefined && expiresAt !== undefined) throw new UsageError('give --expires-in or --expires-at, not both');
      let until: Date;
      if (expiresAt !== undefined) {
        until = requireFuture('expires-at', parseRfc3339('expires-at', expiresAt), now);
        if (until.getTime() - now.getTime() > MAX_ROLL_S * 1000) {
          throw new UsageError(`--expires-at must be at most ${MAX_ROLL_S / DAY_S} days ahead; issue a second key with keys create instead`);
        }
      } else {
        until = new Date(now.getTime() + (expiresIn === undefined ? DAY_S : requireInteger('expires-in', expiresIn, 0, MAX_ROLL_S)) * 1000);
      }
      return {
        run: (db) => rollKey(db, id!, until),
        notes: (result: Awaited<ReturnType<typeof rollKey>>) => [
          `the new key's secret is shown only this once and stored only as a hash: keep it somewhere safe now`,
          `the old key ${result.old.id} keeps working until ${result.old.expires_at}`,
        ],
      };
    },
  },
];

const POSITIONAL_IDS: Record<string, ['acct' | 'key', string]> = { ACCT_ID: ['acct', 'ACCT_ID'], KEY_ID: ['key', 'KEY_ID'] };
const GROUPS = [...new Set(COMMANDS.filter((c) => c.name.includes(' ')).map((c) => c.name.split(' ')[0]!))];

const usageLine = (c: Command) => `${PROGRAM} ${c.name}${c.synopsis ? ' ' + c.synopsis : ''}`;

function topHelp(): string {
  return (
    `Usage: ${PROGRAM} <command> [arguments] [options]\n\n` +
    'Onboarding and operations for the payment orchestration service. Uses the same database as the\n' +
    'service: PostgreSQL when DATABASE_URL is set, otherwise the embedded database in DATA_DIR\n' +
    '(default ./data; usable only while the service is stopped).\n\n' +
    'Commands:\n' +
    COMMANDS.map((c) => `  ${c.name}${c.synopsis ? ' ' + c.synopsis : ''}\n      ${c.summary}`).join('\n') +
    '\n  listen --forward-to URL [--api-key sk_test_…] [--events TYPE]\n' +
    '      Forward one mode\'s events, signed, to a local URL while you develop (see listen --help)\n' +
    '  ledger check\n      Recompute balances from the journal and report any difference\n' +
    '\nResults are printed as JSON on stdout. Errors are printed as "error: ..." on stderr, with exit code 2\n' +
    'for usage and onboarding errors and 1 for anything else. `<command> --help` describes one command.\n'
  );
}

function groupHelp(group: string): string {
  const rows = COMMANDS.filter((c) => c.name.startsWith(group + ' '));
  return `Usage: ${PROGRAM} ${group} <subcommand>\n\n` + rows.map((c) => `  ${usageLine(c)}\n      ${c.summary}`).join('\n') + '\n';
}

function commandHelp(c: Command): string {
  return `Usage: ${usageLine(c)}\n\n${c.summary}.\n${c.details ? '\n' + c.details + '\n' : ''}`;
}

type Parsed = { help: string } | { command: Command; prepared: Prepared };

/** Resolves the command and checks every argument; throws UsageError with the usage to show. */
export function parseCommand(argv: string[], now: Date): Parsed {
  const wantsHelp = (args: string[]) => {
    const end = args.indexOf('--');
    return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
  };
  const [first, second] = argv;
  if (first === undefined) throw Object.assign(new UsageError('no command given'), { usage: topHelp() });
  if (first === '--help' || first === '-h' || first === 'help') return { help: topHelp() };

  let command: Command | undefined;
  let rest: string[];
  if (GROUPS.includes(first)) {
    if (second === undefined || second.startsWith('-')) {
      if (wantsHelp(argv.slice(1))) return { help: groupHelp(first) };
      throw Object.assign(new UsageError(`${first} needs a subcommand`), { usage: groupHelp(first) });
    }
    command = COMMANDS.find((c) => c.name === `${first} ${second}`);
    if (!command) throw Object.assign(new UsageError(`unknown ${first} subcommand ${JSON.stringify(second)}`), { usage: groupHelp(first) });
    rest = argv.slice(2);
  } else {
    command = COMMANDS.find((c) => c.name === first);
    if (!command) throw Object.assign(new UsageError(`unknown command ${JSON.stringify(first)}`), { usage: topHelp() });
    rest = argv.slice(1);
  }
  if (wantsHelp(rest)) return { help: commandHelp(command) };

  const withUsage = (err: UsageError) => Object.assign(err, { usage: `usage: ${usageLine(command)}\n` });
  try {
    let parsed;
    try {
      parsed = parseArgs({ args: rest, options: command.options, allowPositionals: true, strict: true, tokens: true });
    } catch (err) {
      // node:util's own messages are clear ("Unknown option '--x'", "argument missing"); keep the first line.
      throw new UsageError(String((err as Error).message).split('\n')[0]!);
    }
    const seen = new Set<string>();
    for (const token of parsed.tokens ?? []) {
      if (token.kind !== 'option') continue;
      if (seen.has(token.name)) throw new UsageError(`--${token.name} is given more than once`);
      seen.add(token.name);
    }
    const { positionals } = parsed;
    if (positionals.length < command.positionals.length) {
      throw new UsageError(`missing ${command.positionals.slice(positionals.length).join(' ')}`);
    }
    if (positionals.length > command.positionals.length) {
      throw new UsageError(`unexpected argument ${JSON.stringify(positionals[command.positionals.length])}`);
    }
    command.positionals.forEach((name, i) => {
      const id = POSITIONAL_IDS[name];
      if (id) requireId(id[0], positionals[i]!, id[1]);
    });
    return { command, prepared: command.prepare({ values: parsed.values as Values, positionals, now }) };
  } catch (err) {
    if (err instanceof UsageError) throw withUsage(err);
    throw err;
  }
}

export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout(text: string): void;
  stderr(text: string): void;
  now?(): Date;
}

function describe(err: unknown): string {
  if (err instanceof AggregateError && !err.message) return err.errors.map(describe).join('; ');
  if (err instanceof Error) return err.message || (err as NodeJS.ErrnoException).code || err.name;
  return String(err);
}

/** Runs one command line; answers the process exit code (0 done, 2 usage or onboarding error, 1 other). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  try {
    const parsed = parseCommand(argv, io.now?.() ?? new Date());
    if ('help' in parsed) {
      io.stdout(parsed.help);
      return 0;
    }
    const config = loadConfig(io.env);
    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
    try {
      await runMigrations(database);
      const result = await parsed.prepared.run(database.db);
      io.stdout(JSON.stringify(result, null, 2) + '\n');
      for (const note of parsed.prepared.notes?.(result) ?? []) io.stderr(`note: ${note}\n`);
    } finally {
      await database.close();
    }
    return 0;
  } catch (err) {
    if (err instanceof UsageError || err instanceof OnboardingError || err instanceof ConfigError || err instanceof DataDirLockedError) {
      io.stderr(`error: ${err.message}\n`);
      const usage = (err as { usage?: string }).usage;
      if (usage) io.stderr(usage.endsWith('\n') ? usage : usage + '\n');
      return 2;
    }
    io.stderr(`error: ${describe(err)}\n`);
    return 1;
  }
}
