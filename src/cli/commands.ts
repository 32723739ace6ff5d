// The operator's command line: finds the command (the table is in onboarding.ts), checks its
// arguments, opens and migrates the same database as the service and runs it; results are JSON on
// stdout, errors `error: ...` on stderr, help and usage for people.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { DataDirLockedError, openDatabase, runMigrations, type Database } from '../storage/db.js';
import { OnboardingError } from '../domain/accounts/service.js';
import { UsageError, requireId } from './args.js';
import { COMMANDS as ONBOARDING, PROGRAM, type Command, type Prepared, type Values } from './onboarding.js';
import { DASHBOARD_COMMANDS } from './dashboard.js';
import { VAULT_COMMANDS } from './vault.js';
import { DISPUTE_COMMANDS } from './disputes.js';

const COMMANDS = [...ONBOARDING, ...DASHBOARD_COMMANDS, ...VAULT_COMMANDS, ...DISPUTE_COMMANDS];

const POSITIONAL_IDS: Record<string, ['acct' | 'key', string]> = { ACCT_ID: ['acct', 'ACCT_ID'], KEY_ID: ['key', 'KEY_ID'] };
const GROUPS = [...new Set(COMMANDS.filter((c) => c.name.includes(' ')).map((c) => c.name.split(' ')[0]!))];

const usageLine = (c: Command) => `${PROGRAM} ${c.name}${c.synopsis ? ' ' + c.synopsis : ''}`;

function topHelp(): string {
  return (
    `Usage: ${PROGRAM} <command> [arguments] [options]\n\n` +
    'Onboarding and operations for the payment orchestration service. Uses the same database as the\n' +
    'service: PostgreSQL when DATABASE_URL is set, otherwise the embedded database in DATA_DIR\n' +
    '(default ./data; while the service runs on it, commands run inside the service through its socket).\n\n' +
    'Commands:\n' +
    COMMANDS.map((c) => `  ${c.name}${c.synopsis ? ' ' + c.synopsis : ''}\n      ${c.summary}`).join('\n') +
    '\n  listen --forward-to URL [--api-key sk_test_…] [--events TYPE]\n' +
    '      Forward one mode\'s events, signed, to a local URL while you develop (see listen --help)\n' +
    '  trigger <event-type> | trigger --list\n' +
    '      Make an event of that type happen in test mode, through the API (see trigger --help)\n' +
    '  ledger check\n      Recompute balances from the journal and report any difference\n' +
    '  reconcile --connector-account ca_… [--file REPORT.csv]\n      Reconcile a connector account\'s settlement records with the ledger, through the API (see reconcile --help)\n' +
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
  /** Set inside the service (admin-channel.ts): its open database and configuration, used as they are. */
  service?: { database: Database; config: Config };
}

/**
 * Runs `work` on the command's database: the service's when the command runs inside it, otherwise
 * the one the configuration names, opened and migrated for the command and closed after it.
 */
export async function withDatabase<T>(io: CliIo, work: (database: Database, config: Config) => Promise<T>): Promise<T> {
  if (io.service) return work(io.service.database, io.service.config);
  const config = loadConfig(io.env);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2, preparedStatements: config.databasePreparedStatements });
  try {
    await runMigrations(database);
    return await work(database, config);
  } finally {
    await database.close();
  }
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
    const result = await withDatabase(io, (database, config) => parsed.prepared.run(database.db, config));
    io.stdout(JSON.stringify(result, null, 2) + '\n');
    for (const note of parsed.prepared.notes?.(result) ?? []) io.stderr(`note: ${note}\n`);
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
