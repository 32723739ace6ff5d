// Experiment: the unchanged service entry (src/main.ts) in N node:cluster workers sharing one port,
// to measure what a multi-process deployment would gain without touching src/.
// Run: BENCH_SERVICE_ENTRY=bench/experiments/cluster-main.ts BENCH_CLUSTER_WORKERS=2 npm run bench
import cluster from 'node:cluster';
import os from 'node:os';

const workers = Number(process.env.BENCH_CLUSTER_WORKERS || os.availableParallelism());

if (cluster.isPrimary) {
  for (let i = 0; i < workers; i++) cluster.fork();
  let stopping = false;
  cluster.on('exit', (worker, code, signal) => {
    if (!stopping) {
      process.stderr.write(`cluster worker ${worker.process.pid} died (${code ?? signal}); stopping\n`);
      stop();
    }
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
  });
  const stop = () => {
    stopping = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  await import('../../src/main.js');
}
