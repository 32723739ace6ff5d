// CLI entry point: `npm run cli -- <command>` (`npm run cli -- --help` lists the commands). On the
// embedded database, while the service runs and holds it, a command that needs the database runs
// inside the service, through its admin channel (admin-channel.ts), with the same output.
import { loadConfig, type Config } from '../config.js';
import { runThroughService } from './admin-channel.js';
import { dispatch, usesDatabase } from './dispatch.js';
import type { CliIo } from './commands.js';

const argv = process.argv.slice(2);

async function run(io: CliIo): Promise<number> {
  if (usesDatabase(argv)) {
    let config: Config | undefined;
    try {
      config = loadConfig(io.env);
    } catch {
      // An invalid configuration is reported by the command itself, run here.
    }
    const answer = config && !config.databaseUrl ? await runThroughService(config.dataDir, argv) : undefined;
    if (answer) {
      io.stdout(answer.stdout);
      io.stderr(answer.stderr);
      return answer.code;
    }
  }
  return dispatch(argv, io);
}

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
