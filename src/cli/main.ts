// CLI entry point: `npm run cli -- <command>` (`npm run cli -- --help` lists the commands).
import { runCli } from './commands.js';

const argv = process.argv.slice(2);
// `listen` runs until Ctrl-C, against the API rather than the database: src/cli/listen.ts.
const run = (io: Parameters<typeof runCli>[1]) =>
  argv[0] === 'listen'
    ? import('./listen.js').then((m) => m.runListen(argv.slice(1), io))
    : argv[0] === 'ledger'
      ? import('./ledger.js').then((m) => m.runLedger(argv.slice(1), io))
      : runCli(argv, io);

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
