// Card numbers and CVCs are never logged — on success, on declines, on validation errors, on a
// timeout, and on an internal error while the card is in hand — and never stored: the captured
// log lines and every table are searched for them.
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import type { Connector } from '../../src/connectors/types.js';
import { LogCapture } from '../support/helpers.js';
import { CARDS, cardMethod, newOrder, inProcessSimulators } from '../support/payments.js';
import { useService } from '../support/fixtures.js';

const CVC = '7391';
const logs = new LogCapture();
const sims = inProcessSimulators();
// A processor whose answer the database cannot store (a NUL in its reference): an internal error
// in the second phase, with the card still in memory.
const broken: Connector = {
  ...sims.b,
  charge: async (request) => ({ kind: 'succeeded', connectorReference: `bad\u0000${request.card!.number.slice(0, 0)}` }),
};
const h = useService({ logs, runtime: { connectors: [sims.a, broken] } });
afterAll(() => sims.close());

// Four digits turn up by chance inside random ids (a UUID group, a TypeID), so the CVC is looked
// for as a value of its own: not preceded or followed by another id character.
const standalone = (digits: string) => new RegExp(`(?<![0-9A-Za-z_.-])${digits}(?![0-9A-Za-z_-])`);

describe('card data in logs and storage', () => {
  it('never appears, whatever happens to the payment', async () => {
    const { api } = h;
    const used: string[] = [];
    const attempt = async (number: string, card: Record<string, unknown> = {}) => {
      used.push(number);
      const order = await newOrder(api);
      return api.post('/v1/payments', { payment_order: order.id, payment_method: cardMethod(number, { cvc: CVC, ...card }) });
    };
    expect((await attempt(CARDS.success)).status).toBe(201);
    expect((await attempt(CARDS.declined)).body.status).toBe('failed');
    expect((await attempt(CARDS.insufficientFunds)).body.status).toBe('failed');
    expect((await attempt(CARDS.pending)).body.status).toBe('pending');
    expect((await attempt(CARDS.timeout)).body.status).toBe('pending');
    expect((await attempt('4242424242424241')).status).toBe(400); // Luhn
    expect((await attempt('5555555555554444')).status).toBe(400); // not a test card
    expect((await attempt(CARDS.success, { exp_year: 2001 })).status).toBe(400);
    expect((await attempt(CARDS.success, { unknown: 1 })).status).toBe(400);
    // simulator_a refuses the processor-error card; simulator_b's answer breaks the second phase.
    const failed = await attempt(CARDS.processorError);
    expect(failed.status, failed.text).toBe(500);
    expect(failed.body.error.code).toBe('internal_error');

    await expect.poll(() => logs.lines.filter((l) => JSON.parse(l).msg === 'request').length).toBeGreaterThanOrEqual(used.length);
    const text = logs.text;
    expect(text).toContain('request failed'); // the 500 was logged, with its cause
    for (const number of used) {
      expect(text).not.toContain(number);
      expect(text).not.toContain(number.slice(0, 12)); // nor a prefix long enough to matter
    }
    expect(text).not.toMatch(standalone(CVC));
    expect(text).not.toMatch(/"cvc"/);

    // Nor stored: not in any table, not even hashed without a key into the idempotency record.
    const dump = await h.query(
      sql`SELECT string_agg(t::text, ' ') AS all FROM (
            SELECT to_jsonb(p)::text AS t FROM payments p UNION ALL SELECT to_jsonb(e)::text FROM events e
            UNION ALL SELECT to_jsonb(k)::text FROM idempotency_keys k UNION ALL SELECT to_jsonb(o)::text FROM payment_orders o) x`,
    );
    const stored = String(dump[0]!.all);
    expect(stored).toContain('4242'); // last4 is kept
    for (const number of used) expect(stored).not.toContain(number);
    expect(stored).not.toMatch(standalone(CVC));
  });
});
