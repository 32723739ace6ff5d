// The operator CLI under test: run as a real child process (`node --import tsx src/cli/main.ts ...`)
// or, for the many argument checks, in this process; with an environment that picks no database
// but the one given.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli as runCliInProcess } from '../../src/cli/commands.js';
import { ROOT } from './processes.js';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON, when it is JSON. */
  json: any;
}

const parsed = (stdout: string) => {
  try {
    return stdout ? JSON.parse(stdout) : undefined;
  } catch {
    return undefined;
  }
};

/** Environment of the CLI: this process's, minus anything that would pick another database. */
export function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.DATABASE_URL;
  delete env.DATA_DIR;
  return { ...env, ...extra };
}

/** The CLI as its own process. */
export function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: ROOT, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, json: parsed(stdout) }));
  });
}

/** The same command line run in this process (fast). */
export async function runCliHere(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCliInProcess(args, { env, stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) });
  return { code, stdout, stderr, json: parsed(stdout) };
}

export function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'po-cli-'));
}
