// What the webhook sender alone costs: CPU time per request of this process, sending signed-sized
// POSTs with 128 in flight to a receiver in a process of its own on 127.0.0.1 (no database, no
// signing), so the figure is the HTTP client's and stays readable on a noisy machine.
// Another checkout's sender can be measured the same way, for a before/after of a client change.
// Run: npx tsx bench/experiments/sender-cpu.ts [requests=38400] [sender module=src/domain/webhooks/sender.ts]
import { fork } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Sender } from '../../src/domain/webhooks/sender.js';
import { ROOT } from '../lib/service.js';

const IN_FLIGHT = 128;
const requests = Number(process.argv[2] ?? 38_400);
const modulePath = path.resolve(process.argv[3] ?? path.join(ROOT, 'src/domain/webhooks/sender.ts'));

// A bare node:http receiver: it reads the body and answers 204.
const RECEIVER = `
const http = require('node:http');
const server = http.createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(204); res.end(); }); });
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send(server.address().port));`;

async function main() {
  const { createSender } = (await import(pathToFileURL(modulePath).href)) as { createSender: (o: { maxSockets: number }) => Sender };
  const receiver = fork('-e', [RECEIVER], { execArgv: [], stdio: 'ignore' });
  receiver.unref();
  try {
    const port = await new Promise<number>((resolve, reject) => {
      receiver.once('message', (m) => resolve(Number(m)));
      receiver.once('exit', (code) => reject(new Error(`the receiver exited (${code})`)));
    });
    const sender = createSender({ maxSockets: IN_FLIGHT });
    const body = JSON.stringify({ id: 'evt_bench', object: 'event', type: 'payment_order.created', data: { object: { note: 'x'.repeat(600) } } });
    const headers = { 'webhook-id': 'evt_bench', 'webhook-timestamp': '1700000000', 'webhook-signature': `v1,${'a'.repeat(44)}` };
    const lane = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const result = await sender.send({ url: `http://127.0.0.1:${port}/hook`, headers, body, timeoutMs: 15_000, guarded: false });
        if (result.statusCode !== 204) throw new Error(`unexpected result ${JSON.stringify(result)}`);
      }
    };
    const run = (n: number) => Promise.all(Array.from({ length: IN_FLIGHT }, () => lane(Math.ceil(n / IN_FLIGHT))));
    await run(IN_FLIGHT * 40); // warm-up: connections open, code optimised
    const sent = Math.ceil(requests / IN_FLIGHT) * IN_FLIGHT;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await run(sent);
    const cpu = process.cpuUsage(cpu0);
    const seconds = (performance.now() - t0) / 1000;
    const us = (micros: number) => (micros / sent).toFixed(1);
    process.stdout.write(
      `${path.relative(process.cwd(), modulePath)}: ${sent} requests, ${(sent / seconds).toFixed(0)}/s, ` +
        `CPU ${us(cpu.user + cpu.system)} µs per request (user ${us(cpu.user)}, system ${us(cpu.system)})\n`,
    );
    sender.close();
  } finally {
    receiver.kill();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
