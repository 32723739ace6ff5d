// `npm run cli -- listen`: new events of the key's account and mode are forwarded to a local URL,
// signed like real deliveries with the secret the command prints.
import { spawnSync } from 'node:child_process';
import { getEventListeners } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { orderBody } from '../support/helpers.js';
import { verify } from '../support/webhooks.js';
import { listen, parseListenArgs } from '../../src/cli/listen.js';
import { newWebhookSecret } from '../../src/domain/webhooks/signing.js';
import { useService } from '../support/fixtures.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const h = useService();

describe('cli listen', () => {
  it('forwards new events, signed, and nothing from before it started', async () => {
    const { tenant, api } = h;
    const other = (await h.newTenant()).api;
    const receiver = await h.receiver();
    const before = (await api.post('/v1/payment-orders', orderBody())).body;
    const secret = newWebhookSecret();
    const out: string[] = [];
    const err: string[] = [];
    const controller = new AbortController();
    const ready = new Promise<void>((resolve) => {
      const running = listen(
        { apiUrl: h.url, apiKey: tenant.testKey, forwardTo: receiver.url, secret, intervalMs: 50, events: 'payment_order.*' },
        { stdout: (t) => out.push(t), stderr: (t) => (err.push(t), t.startsWith('Ready') && resolve()) },
        controller.signal,
      );
      void running.then((n) => out.push(`done ${n}`));
    });
    await ready;
    expect(err.join('')).toContain(secret);
    const order = (await api.post('/v1/payment-orders', orderBody())).body;
    await api.post(`/v1/payment-orders/${order.id}/cancel`);
    await other.post('/v1/payment-orders', orderBody());
    await receiver.waitFor(() => receiver.requests.length >= 2, 10_000);
    await new Promise((r) => setTimeout(r, 200));
    controller.abort();
    const events = receiver.requests.map((r) => verify(secret, r));
    expect(events.map((e) => [e.type, e.data.object.id])).toEqual([
      ['payment_order.created', order.id],
      ['payment_order.cancelled', order.id],
    ]);
    expect(events.some((e) => e.data.object.id === before.id)).toBe(false);
    const fetched = await api.get(`/v1/events/${events[0].id}`);
    expect(receiver.requests[0]!.body).toBe(fetched.text);
    expect(out.join('')).toMatch(/payment_order\.created evt_\w+ {2}<-- \[200\]/);
  });

  it('polls for a long time without piling listeners on its stop signal', async () => {
    const tenant = await h.createTenant();
    const receiver = await h.receiver();
    const controller = new AbortController();
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    let ready!: () => void;
    const started = new Promise<void>((resolve) => (ready = resolve));
    const running = listen(
      { apiUrl: h.url, apiKey: tenant.testKey, forwardTo: receiver.url, secret: newWebhookSecret(), intervalMs: 50 },
      { stdout: () => {}, stderr: (t) => t.startsWith('Ready') && ready() },
      controller.signal,
    );
    try {
      await started;
      const counts: number[] = [];
      // Well over the 10 listeners after which Node warns, at 50 ms a poll.
      for (let i = 0; i < 20; i++) {
        await new Promise((r) => setTimeout(r, 100));
        counts.push(getEventListeners(controller.signal, 'abort').length);
      }
      expect(Math.max(...counts)).toBeLessThanOrEqual(1);
    } finally {
      controller.abort();
      await running;
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it('checks its flags', () => {
    expect(() => parseListenArgs([], {})).toThrow(/--forward-to/);
    expect(() => parseListenArgs(['--forward-to', 'localhost:3000'], { API_KEY: 'sk_test_x' })).toThrow(/http/);
    expect(() => parseListenArgs(['--forward-to', 'http://localhost:4242/hooks'], {})).toThrow(/api-key/);
    expect(() => parseListenArgs(['--forward-to', 'http://localhost:4242/hooks', '--secret', 'nope'], { API_KEY: 'k' })).toThrow(/whsec_/);
    const opts = parseListenArgs(['--forward-to', 'http://localhost:4242/hooks'], { API_KEY: 'sk_test_abc', API_URL: 'http://x:1/' });
    expect(opts).toMatchObject({ apiUrl: 'http://x:1', apiKey: 'sk_test_abc', intervalMs: 1000, keyOnCommandLine: false });
    expect(opts.secret).toMatch(/^whsec_/);
    // The environment wins over the flag, which `ps` shows to every user of the machine.
    const both = parseListenArgs(['--forward-to', 'http://localhost:4242/hooks', '--api-key', 'sk_test_flag'], { API_KEY: 'sk_test_env' });
    expect(both).toMatchObject({ apiKey: 'sk_test_env', keyOnCommandLine: false });
    const flag = parseListenArgs(['--forward-to', 'http://localhost:4242/hooks', '--api-key', 'sk_test_flag'], {});
    expect(flag).toMatchObject({ apiKey: 'sk_test_flag', keyOnCommandLine: true });
  });

  it('is wired into the command line', () => {
    const help = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'listen', '--help'], { cwd: ROOT, encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('--forward-to');
    const bad = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'listen'], { cwd: ROOT, encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--forward-to is required');
  });
});
