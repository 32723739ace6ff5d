// The webhook receiver of `npm run bench -- webhooks`, in a process of its own so that it costs
// the same whether autocannon (the ceiling) or the delivery worker sends to it. Like a real
// receiver it verifies every signature (node:crypto, Standard Webhooks) before answering 200.
// IPC: sends { port } when listening; { secret } sets the endpoint's secret; 'report' answers
// with counts and the first arrival time of each webhook-id; 'reset' clears them.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

let secret = Buffer.alloc(32);
let requests = 0;
let invalid = 0;
let arrivals = new Map<string, number>();

function valid(id: string, timestamp: string, body: string, header: string): boolean {
  const expected = crypto.createHmac('sha256', secret).update(`${id}.${timestamp}.${body}`).digest();
  return header.split(' ').some((part) => {
    const [version, sig] = part.split(',');
    const given = Buffer.from(sig ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = performance.timeOrigin + performance.now();
    requests++;
    const id = String(req.headers['webhook-id'] ?? '');
    if (!valid(id, String(req.headers['webhook-timestamp']), Buffer.concat(chunks).toString('utf8'), String(req.headers['webhook-signature'] ?? ''))) {
      invalid++;
      res.writeHead(400).end();
      return;
    }
    if (!arrivals.has(id)) arrivals.set(id, at);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));

process.on('message', (message) => {
  if (typeof message === 'object' && message !== null && 'secret' in message) {
    secret = Buffer.from(String((message as { secret: string }).secret).replace(/^whsec_/, ''), 'base64');
  }
  if (message === 'report') process.send!({ requests, invalid, arrivals: [...arrivals] });
  if (message === 'reset') {
    requests = 0;
    invalid = 0;
    arrivals = new Map();
  }
});
process.on('disconnect', () => process.exit(0));
