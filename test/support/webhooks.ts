// Webhook test kit: a real HTTP receiver on 127.0.0.1 that records every request and answers as
// each test programs it, standardwebhooks verification as an integrator would do it, and a worker
// pass with an injected clock.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { expect } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import type { Database } from '../../src/storage/db.js';
import { createEncryptor } from '../../src/kernel/encryption.js';
import { runWorkerOnce, type WebhookWorkerOptions } from '../../src/worker/worker.js';
import { created, orderBody, type Api } from './helpers.js';
import type { ServiceFixture } from './fixtures.js';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  receivedAtMs: number;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** Answer only after this long (to provoke timeouts). */
  delayMs?: number;
  /** Close the connection without answering. */
  destroy?: boolean;
}

export class Receiver {
  readonly requests: Received[] = [];
  answer: (req: Received, index: number) => Answer = () => ({ status: 200 });
  private waiters: { predicate: () => boolean; resolve: () => void }[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<Receiver> {
    let receiver!: Receiver;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const received: Received = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), receivedAtMs: Date.now() };
        const index = receiver.requests.length;
        receiver.requests.push(received);
        const answer = receiver.answer(received, index);
        const send = () => {
          if (answer.destroy) return req.socket.destroy();
          res.writeHead(answer.status, answer.headers ?? {});
          res.end('ok');
        };
        if (answer.delayMs) setTimeout(send, answer.delayMs);
        else send();
        receiver.check();
      });
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    receiver = new Receiver(server, `http://127.0.0.1:${port}/webhooks`);
    return receiver;
  }

  private check() {
    this.waiters = this.waiters.filter((w) => {
      if (!w.predicate()) return true;
      w.resolve();
      return false;
    });
  }

  /** Waits until `predicate` holds (checked at every request). */
  async waitFor(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
    if (predicate()) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`receiver: condition not met within ${timeoutMs} ms (${this.requests.length} requests)`)), timeoutMs);
      this.waiters.push({
        predicate,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  forEvent(eventId: string): Received[] {
    return this.requests.filter((r) => r.headers['webhook-id'] === eventId);
  }

  async close() {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Verifies like an integrator with the published package; returns the parsed event or throws. */
export function verify(secret: string, received: Received): any {
  return new Webhook(secret).verify(received.body, {
    'webhook-id': String(received.headers['webhook-id']),
    'webhook-timestamp': String(received.headers['webhook-timestamp']),
    'webhook-signature': String(received.headers['webhook-signature']),
  });
}

export function verifies(secret: string, received: Received): boolean {
  try {
    verify(secret, received);
    return true;
  } catch {
    return false;
  }
}

/** Delivery settings for tests (over the defaults a test service has): short deadline, no jitter, a compressed schedule unless given. */
export function webhookOptions(overrides: Partial<Config['webhooks']> = {}, extra: Partial<WebhookWorkerOptions> = {}, config: Config = loadConfig({})): WebhookWorkerOptions {
  return {
    config: {
      ...config.webhooks,
      timeoutMs: 2000,
      leaseMs: 5000,
      retryJitterRatio: 0,
      retryScheduleS: { live: [0, 5, 300, 1800], test: [0, 5, 300, 1800] },
      ...overrides,
    },
    encryptor: createEncryptor(config.encryptionKeys),
    ...extra,
  };
}

const silent = { info: () => {}, warn: () => {}, error: () => {} };

/** One worker pass (dispatch, then every delivery due at `at`). */
export async function deliverAt(database: Database, webhooks: WebhookWorkerOptions, at: Date = new Date()) {
  const result = await runWorkerOnce({ db: database.db, log: silent, now: () => at, webhooks });
  return result.webhooks!;
}

/** A new tenant with an endpoint, on a receiver of its own, subscribed to `events` in `mode`. */
export async function subscribedTenant(h: ServiceFixture, events: string[] = ['*'], mode: 'test' | 'live' = 'test') {
  const tenant = await h.newTenant();
  const api = mode === 'test' ? tenant.api : tenant.live;
  const receiver = await h.receiver();
  const endpoint = (await created(api, '/v1/webhook-endpoints', { url: receiver.url, enabled_events: events })) as { id: string; secret: string };
  return { tenant, api, receiver, endpoint };
}

/** A new payment order and its payment_order.created event. */
export async function newOrderEvent(api: Api) {
  const order = await created(api, '/v1/payment-orders', orderBody());
  const events = await api.get('/v1/events?type=payment_order.created&limit=1');
  expect(events.body.data[0].data.object.id).toBe(order.id);
  return { order, event: events.body.data[0] };
}
