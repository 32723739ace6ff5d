// One CLI command line, whichever command it is: the table of onboarding and operations commands
// (commands.ts) or a command with its own parser. src/cli/main.ts runs it in the CLI's process;
// the service runs it on its own open database for a CLI beside it (admin-channel.ts).
import { runCli, type CliIo } from './commands.js';

const OWN_PARSERS: Record<string, (args: string[], io: CliIo) => Promise<number>> = {
  listen: (args, io) => import('./listen.js').then((m) => m.runListen(args, io)),
  trigger: (args, io) => import('./trigger.js').then((m) => m.runTrigger(args, io)),
  ledger: (args, io) => import('./ledger.js').then((m) => m.runLedger(args, io)),
  reconcile: (args, io) => import('./reconcile.js').then((m) => m.runReconcile(args, io)),
};

/** `listen` (runs until Ctrl-C), `trigger` and `reconcile` talk to a running service's API, never to the database. */
export const usesDatabase = (argv: string[]) => !['listen', 'trigger', 'reconcile'].includes(argv[0] ?? '');

export function dispatch(argv: string[], io: CliIo): Promise<number> {
  const own = argv[0] !== undefined && Object.hasOwn(OWN_PARSERS, argv[0]) ? OWN_PARSERS[argv[0]] : undefined;
  return own ? own(argv.slice(1), io) : runCli(argv, io);
}
