// `npm run simulator`: the simulated processors as a standalone server. Point the service at it
// with SIMULATOR_URL=http://127.0.0.1:<port>; its webhooks go to SIMULATOR_WEBHOOK_URL (the
// service's base URL). Its books are in its own memory: the processor's own process outlives
// service restarts, and stopping it resets the sandbox. (In process, the default, the simulated
// processors keep their books in the service's database instead, shared by every process on it.)
import { loadConfig } from '../../config.js';
import { startSimulatorServer } from './server.js';

async function main() {
  const config = loadConfig();
  const port = Number(process.env.SIMULATOR_PORT ?? 4010);
  const server = await startSimulatorServer({
    port,
    hostname: process.env.SIMULATOR_HOST ?? '127.0.0.1',
    familySecret: config.payments.simulator.webhookSecret,
    pendingDelayMs: config.payments.simulator.pendingDelayMs,
    latencyMs: config.payments.simulator.latencyMs,
    webhookBaseUrl: config.payments.simulator.webhookUrl,
  });
  process.stdout.write(`Simulated processors ${[...server.host.processors.keys()].join(', ')} listening on ${server.url}\n`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err) => {
  process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
