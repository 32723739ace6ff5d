// A service as its own OS process (src/main.ts on a free port), for the tests that kill one with a
// real SIGKILL between the phases of a movement (CRASH_AFTER) and resume it from another process on
// the same PostgreSQL database.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface Child {
  process: ChildProcess;
  url: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
}

export async function startChild(env: Record<string, string>): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', METRICS_PORT: '0', ROLES: 'api', LOG_LEVEL: 'warn', RATE_LIMIT_TEST_PER_S: '100000', RATE_LIMIT_TEST_BURST: '100000', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${output}`)), 45_000);
    child.stdout!.on('data', () => {
      const match = /Listening on (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`service exited during start-up:\n${output}`));
    });
  });
  return { process: child, url, exited, output: () => output };
}

export async function stopChild(child: Child | undefined) {
  if (!child || child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill('SIGTERM');
  const timer = setTimeout(() => child.process.kill('SIGKILL'), 10_000);
  await child.exited;
  clearTimeout(timer);
}
