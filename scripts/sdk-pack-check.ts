// The SDK as an integrator gets it: `npm pack` of sdk/ (its prepare script builds dist/), the
// tarball installed into an empty project beside TypeScript, sdk/examples/quick-start.ts
// type-checked there (strict, the SDK's declarations checked too) and run against a service
// started on a fresh embedded database. Needs nothing beyond the npm registry (and uses npm's
// cache first). `npm run sdk:pack-check`; .ci/run runs it.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const SDK = path.join(ROOT, 'sdk');
const EXAMPLE = path.join(SDK, 'examples', 'quick-start.ts');
/** What the packed SDK must hold, and what it must not (sources, examples, its tsconfig). */
const PACKED = ['package/package.json', 'package/dist/index.js', 'package/dist/index.d.ts', 'package/dist/openapi.d.ts'];

const versionOf = (name: string): string => JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  return execFileSync(command, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
}

function step<T>(name: string, body: () => T): T {
  const start = Date.now();
  const result = body();
  console.log(`sdk-pack-check: ${name} (${((Date.now() - start) / 1000).toFixed(1)} s)`);
  return result;
}

/** Starts `npm start`'s entry point on a fresh embedded database; `ready` has its URL and the test key it prints on a first start. */
function startService(dataDir: string): { child: ChildProcess; ready: Promise<{ url: string; key: string }> } {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'warn', ROLES: 'api,worker' };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  // Node itself runs the service (tsx as a loader), so that the signal at the end reaches it.
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  const ready = new Promise<{ url: string; key: string }>((resolve, reject) => {
    let out = '';
    // A first start migrates the embedded database: slow on a loaded machine.
    const timer = setTimeout(() => reject(new Error(`the service did not start within 180 s:\n${out}`)), 180_000);
    child.on('exit', (code) => reject(new Error(`the service exited (${code}) before listening:\n${out}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const key = /\b(sk_test_\w+)/.exec(out)?.[1];
      const url = /Listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (key && url) {
        clearTimeout(timer);
        resolve({ url, key });
      }
    });
  });
  ready.catch(() => {}); // awaited later, after the package is built: not an unhandled rejection meanwhile
  return { child, ready };
}

async function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-pack-check-'));
  // The service starts while the package is packed, installed and type-checked.
  const service = startService(path.join(work, 'data'));
  try {
    const tarball = step('npm pack (builds dist/)', () => {
      const name = run('npm', ['pack', '--silent', '--pack-destination', work], SDK).trim().split('\n').at(-1)!;
      return path.join(work, name);
    });
    const entries = run('tar', ['-tzf', tarball], work).split('\n');
    const missing = PACKED.filter((entry) => !entries.includes(entry));
    const extra = entries.filter((entry) => entry.startsWith('package/src/') || entry.startsWith('package/examples/'));
    if (missing.length > 0 || extra.length > 0) throw new Error(`the tarball is wrong: missing ${missing.join(', ') || 'nothing'}; unexpected ${extra.join(', ') || 'nothing'}`);

    const project = path.join(work, 'project');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'sdk-pack-check', private: true, type: 'module' }, null, 2));
    // No skipLibCheck: the SDK's own declarations must type-check in a strict consumer.
    const compilerOptions = { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, outDir: 'out', rootDir: '.', types: ['node'] };
    fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['quick-start.ts'] }, null, 2));
    fs.copyFileSync(EXAMPLE, path.join(project, 'quick-start.ts'));
    step('npm install of the tarball', () =>
      run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball, `typescript@${versionOf('typescript')}`, `@types/node@${versionOf('@types/node')}`], project),
    );
    step('tsc over the quick start', () => run(path.join(project, 'node_modules', '.bin', 'tsc'), ['-p', '.'], project));

    const started = await service.ready;
    const output = step('quick start against the service', () =>
      run(process.execPath, ['out/quick-start.js'], project, { ...process.env, PAYMENTS_API_KEY: started.key, PAYMENTS_BASE_URL: started.url }),
    );
    console.log(`sdk-pack-check: ok ${output.trim()}`);
  } finally {
    const { child } = service;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      const stuck = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(stuck);
    }
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(`sdk-pack-check: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
