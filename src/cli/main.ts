// CLI entry point: `npm run cli -- <command>` (`npm run cli -- --help` lists the commands).
import { runCli } from './commands.js';

const argv = process.argv.slice(2);
type Io = Parameters<typeof runCli>[1];
// `listen` (runs until Ctrl-C) and `trigger` talk to a running service's API, not to the database.
const OWN_PARSERS: Record<string, (args: string[], io: Io) => Promise<number>> = {
  listen: (args, io) => import('./listen.js').then((m) => m.runListen(args, io)),
  trigger: (args, io) => import('./trigger.js').then((m) => m.runTrigger(args, io)),
  ledger: (args, io) => import('./ledger.js').then((m) => m.runLedger(args, io)),
};
const own = argv[0] !== undefined && Object.hasOwn(OWN_PARSERS, argv[0]) ? OWN_PARSERS[argv[0]] : undefined;
const run = (io: Io) => (own ? own(argv.slice(1), io) : runCli(argv, io));

run({
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
