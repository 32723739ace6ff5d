// Everything a benchmark starts (databases, processes) registers how to undo it here; the runner
// undoes it all, newest first, on success, on error and on SIGINT/SIGTERM, each step time-bounded.

type Step = { name: string; fn: () => Promise<void> | void };
const steps: Step[] = [];
const syncKills = new Set<() => void>();

/** Registers an undo step; the returned function runs it now (once) and unregisters it. */
export function onCleanup(name: string, fn: () => Promise<void> | void): () => Promise<void> {
  const step = { name, fn };
  steps.push(step);
  let done = false;
  return async () => {
    const i = steps.indexOf(step);
    if (i >= 0) steps.splice(i, 1);
    if (done) return;
    done = true;
    await withTimeout(Promise.resolve().then(fn), 20_000, `cleanup: ${name}`);
  };
}

/** A last-resort synchronous kill for the 'exit' event, where nothing asynchronous can run. */
export function onExitKill(fn: () => void): () => void {
  syncKills.add(fn);
  return () => syncKills.delete(fn);
}

export async function runCleanup(): Promise<void> {
  while (steps.length) {
    const step = steps.pop()!;
    try {
      await withTimeout(Promise.resolve().then(step.fn), 20_000, `cleanup: ${step.name}`);
    } catch (err) {
      process.stderr.write(`cleanup failed (${step.name}): ${err instanceof Error ? err.message : String(err)}\n`);
    }
  }
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${Math.round(ms / 1000)} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

let installed = false;

/** Ctrl-C, SIGTERM, a stray rejection or the overall deadline: clean up, then exit non-zero. */
export function installExitHandlers(deadlineMs: number): void {
  if (installed) return;
  installed = true;
  let exiting = false;
  const bail = (why: string, code: number) => {
    if (exiting) return;
    exiting = true;
    process.stderr.write(`\nbench: ${why}; cleaning up\n`);
    void runCleanup().finally(() => process.exit(code));
    // If cleanup itself hangs, do not hang with it.
    setTimeout(() => process.exit(code), 30_000).unref();
  };
  process.on('SIGINT', () => bail('interrupted', 130));
  process.on('SIGTERM', () => bail('terminated', 143));
  process.on('unhandledRejection', (err) => bail(`unhandled rejection: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`, 1));
  process.on('uncaughtException', (err) => bail(`uncaught exception: ${err.stack ?? err.message}`, 1));
  process.on('exit', () => {
    for (const kill of syncKills) {
      try {
        kill();
      } catch {
        // already gone
      }
    }
  });
  setTimeout(() => bail(`overall deadline of ${Math.round(deadlineMs / 1000)} s exceeded`, 1), deadlineMs).unref();
}

/** Runs a standalone script's `main`: exit 0 when it ends, or print its error, clean up and exit 1. */
export function runScript(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    async (err) => {
      console.error(err);
      await runCleanup();
      process.exit(1);
    },
  );
}
