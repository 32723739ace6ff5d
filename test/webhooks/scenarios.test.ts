// The test-mode delivery scenarios, against a receiver written the way docs/webhooks.md tells
// integrators to write one: verify with standardwebhooks, dedupe by webhook-id, keep the highest
// version per object.
import { beforeAll, describe, expect, it } from 'vitest';
import { Receiver, verify, type Received } from '../support/webhooks.js';
import { useService } from '../support/fixtures.js';

const h = useService();
const { api } = h;
let receiver: Receiver;
let endpoint: { id: string; secret: string };

/** A correct receiver: 400 on a bad signature or stale timestamp, dedupe, keep the newest version. */
const seen = new Set<string>();
const latest = new Map<string, number>();
let processed = 0;
function correctReceiver(r: Received) {
  let event: any;
  try {
    event = verify(endpoint.secret, r);
  } catch {
    return { status: 400 };
  }
  if (seen.has(event.id)) return { status: 200 };
  seen.add(event.id);
  processed++;
  const object = event.data.object;
  if ((latest.get(object.id) ?? 0) < object.version) latest.set(object.id, object.version);
  return { status: 200 };
}

beforeAll(async () => {
  receiver = await h.receiver();
  receiver.answer = correctReceiver;
  endpoint = (await api.post('/v1/webhook-endpoints', { url: receiver.url, enabled_events: ['*'] })).body;
});

const send = (scenario: string, id = endpoint.id, opts = {}) => api.post(`/v1/test-helpers/webhook-endpoints/${id}/send`, { scenario }, opts);

describe('test-mode delivery scenarios', () => {
  it('deliver: one signed event the receiver accepts', async () => {
    const before = receiver.requests.length;
    const res = await send('deliver');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'webhook_test', scenario: 'deliver', webhook_endpoint: endpoint.id, passed: true, answers_as_expected: true });
    expect(res.body.requests).toHaveLength(1);
    expect(res.body.requests[0]).toMatchObject({ event_type: 'webhook_endpoint.test', signature_valid: true, expected: 'accept', response_status: 200, error: null });
    const got = receiver.requests.slice(before);
    expect(got).toHaveLength(1);
    const event = verify(endpoint.secret, got[0]!);
    expect(event).toMatchObject({ id: res.body.requests[0].webhook_id, object: 'event', type: 'webhook_endpoint.test', livemode: false });
    expect(event.data.object).toMatchObject({ object: 'webhook_test', version: 1 });
  });

  it('duplicate: the same webhook-id twice, acted on once', async () => {
    const before = processed;
    const res = await send('duplicate');
    // Two 2xx answers do not show that the receiver acted once: not reported as passed.
    expect(res.body).toMatchObject({ passed: null, answers_as_expected: true, description: expect.stringMatching(/twice/) });
    const [a, b] = res.body.requests;
    expect(a.webhook_id).toBe(b.webhook_id);
    expect(res.body.receiver_should).toContain(`act on ${a.webhook_id} once`);
    expect(processed - before).toBe(1);
    const bodies = receiver.requests.slice(-2).map((r) => r.body);
    expect(bodies[0]).toBe(bodies[1]);
  });

  it('out_of_order: version 2 arrives before version 1; the receiver keeps version 2', async () => {
    const res = await send('out_of_order');
    expect(res.body).toMatchObject({ passed: null, answers_as_expected: true });
    expect(res.body.requests.map((r: any) => r.object_version)).toEqual([2, 1]);
    expect(res.body.requests[0].webhook_id).not.toBe(res.body.requests[1].webhook_id);
    const objectId = verify(endpoint.secret, receiver.requests.at(-1)!).data.object.id;
    expect(latest.get(objectId)).toBe(2);
    expect(res.body.receiver_should).toContain(`keep version 2 of ${objectId}`);
  });

  it('duplicate and out_of_order: a receiver that refuses the second request fails them', async () => {
    let answered = 0;
    receiver.answer = () => ({ status: answered++ % 2 === 1 ? 409 : 200 });
    try {
      for (const scenario of ['duplicate', 'out_of_order']) {
        const res = await send(scenario);
        expect(res.body).toMatchObject({ passed: false, answers_as_expected: false });
        expect(res.body.requests.map((r: any) => [r.expected, r.response_status])).toEqual([['accept', 200], ['accept', 409]]);
      }
    } finally {
      receiver.answer = correctReceiver;
    }
  });

  it('invalid_signature: a receiver that verifies refuses it', async () => {
    const res = await send('invalid_signature');
    expect(res.body).toMatchObject({ passed: true });
    expect(res.body.requests[0]).toMatchObject({ signature_valid: false, expected: 'reject', response_status: 400 });
    expect(() => verify(endpoint.secret, receiver.requests.at(-1)!)).toThrow(/signature/i);
  });

  it('stale_timestamp: a correct signature on an old timestamp is refused', async () => {
    const res = await send('stale_timestamp');
    expect(res.body).toMatchObject({ passed: true });
    expect(Date.now() / 1000 - res.body.requests[0].webhook_timestamp).toBeGreaterThan(300);
    expect(res.body.requests[0]).toMatchObject({ expected: 'reject', response_status: 400 });
    expect(() => verify(endpoint.secret, receiver.requests.at(-1)!)).toThrow(/too old/);
  });

  it('reports a receiver that does not verify as failing the scenario', async () => {
    receiver.answer = () => ({ status: 200 });
    try {
      const res = await send('invalid_signature');
      expect(res.body).toMatchObject({ passed: false, answers_as_expected: false, receiver_should: expect.stringMatching(/^Refuse it \(4xx\)/) });
      expect(res.body.requests[0].response_status).toBe(200);
    } finally {
      receiver.answer = correctReceiver;
    }
  });

  it('is test mode only, validated, replayed with an Idempotency-Key, and scenarios are not events', async () => {
    const bad = await send('explode');
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('scenario');
    const first = await send('deliver', endpoint.id, { idempotencyKey: 'scenario-1' });
    const count = receiver.requests.length;
    const replay = await send('deliver', endpoint.id, { idempotencyKey: 'scenario-1' });
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(receiver.requests.length).toBe(count);
    const events = await api.get('/v1/events?type=webhook_endpoint.test');
    expect(events.body.data).toEqual([]);
    expect((await send('deliver', 'we_01jd8x3v0pe7wbz0m4k6f2n9qa')).status).toBe(404);
  });
});
