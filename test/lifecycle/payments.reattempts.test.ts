// The card networks' reattempt limits (docs/declines.md): every cascaded attempt of a card is a
// reattempt, counted per account, mode and card fingerprint; Visa allows 15 in 30 days and none
// after a do_not_retry decline. Past a limit the payment fails retry_limit_reached and the
// reattempt is not sent; the test helper clears the counts.
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { parseId } from '../../src/kernel/ids.js';
import { tenantLockKey } from '../../src/storage/locks.js';
import { newOrder, pay } from '../support/payments.js';
import { useService } from '../support/fixtures.js';
import { isPostgres } from '../support/helpers.js';
import { newCustomer, savedCard } from '../support/customers.js';

const CASCADING = '4000000000000440';
const CASCADE = { rules: [{ connectors: [{ name: 'simulator_a' }, { name: 'simulator_b' }], cascade: { on: ['generic'], max_attempts: 2 } }] };

describe('reattempt limits (Visa test card, simulators)', () => {
  const h = useService();
  const { api } = h;
  const reset = () => api.request('POST', '/v1/test-helpers/retry-limits/reset', {});

  it('15 cascaded reattempts of one card in 30 days succeed; the 16th is refused unsent, until the counts are reset', async () => {
    expect((await api.request('PUT', '/v1/routing', { body: CASCADE })).status).toBe(200);
    for (let i = 0; i < 15; i++) {
      const res = await pay(api, (await newOrder(api)).id, CASCADING);
      expect(res.body, `payment ${i + 1}`).toMatchObject({ status: 'succeeded', connector: 'simulator_b' });
    }
    const refused = await pay(api, (await newOrder(api)).id, CASCADING);
    expect(refused.status).toBe(201);
    expect(refused.body).toMatchObject({ status: 'failed', failure_code: 'retry_limit_reached', decline_type: 'generic', connector: 'simulator_a' });
    // Only the first attempt was sent: the reattempt was refused before any call.
    expect(refused.body.attempts).toEqual([expect.objectContaining({ connector: 'simulator_a', outcome: 'declined' })]);
    // A customer paying again without a cascade is no reattempt: the plain decline stands.
    expect((await api.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: 'simulator_a' }] }] } })).status).toBe(200);
    expect((await pay(api, (await newOrder(api)).id, CASCADING)).body).toMatchObject({ status: 'failed', failure_code: 'card_declined' });

    const cleared = await reset();
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.body).toMatchObject({ object: 'retry_limits_reset', livemode: false });
    expect(cleared.body.cleared).toBeGreaterThanOrEqual(31);
    await api.request('PUT', '/v1/routing', { body: CASCADE });
    expect((await pay(api, (await newOrder(api)).id, CASCADING)).body).toMatchObject({ status: 'succeeded', connector: 'simulator_b' });
  });

  it('after a do_not_retry decline of the card no reattempt is sent, whatever the count', async () => {
    await reset();
    await api.request('PUT', '/v1/routing', { body: CASCADE });
    const first = await pay(api, (await newOrder(api)).id, CASCADING);
    // The issuer's do_not_retry of this very card (its keyed fingerprint), as another processor would have said it.
    await h.db.execute(sql`INSERT INTO card_reattempts (account_id, livemode, card_fingerprint, brand, kind, decline_type, payment_id, created_at)
      SELECT account_id, livemode, payment_method->'card'->>'fingerprint', 'visa', 'declined', 'do_not_retry', id, now() FROM payments WHERE id = ${parseId('pay', first.body.id)!}`);
    const res = await pay(api, (await newOrder(api)).id, CASCADING);
    expect(res.body).toMatchObject({ status: 'failed', failure_code: 'retry_limit_reached' });
    expect(res.body.failure_message).toMatch(/do_not_retry/);
    expect(res.body.attempts).toHaveLength(1);
  });

  it('the counts are per account: another tenant cascades the same card freely; live keys cannot reset', async () => {
    const other = await h.newTenant();
    await other.api.request('PUT', '/v1/routing', { body: CASCADE });
    expect((await pay(other.api, (await newOrder(other.api)).id, CASCADING)).body).toMatchObject({ status: 'succeeded' });
    const live = await h.live.request('POST', '/v1/test-helpers/retry-limits/reset', {});
    expect(live.status).toBe(403);
  });

  // Most off-session payments are of cards with no recent decline: they read, and neither lock nor count.
  it.skipIf(!isPostgres)('off session: a card with no recent decline is charged without waiting for its lock and counts nothing; declined lately, it counts one reattempt', async () => {
    await reset();
    await api.request('PUT', '/v1/routing', { body: { rules: [{ connectors: [{ name: 'simulator_a' }] }] } });
    const owner = { accountId: h.tenant.accountId, livemode: false };
    const pm = await savedCard(h.db, owner, (await newCustomer(api)).id);
    const offSession = async () =>
      api.post('/v1/payments', { payment_order: (await newOrder(api)).id, payment_method: { type: 'saved_card', saved_card: { id: pm.id } }, off_session: true });
    const counted = async () => (await h.query(sql`SELECT kind FROM card_reattempts WHERE card_fingerprint = ${pm.card.fingerprint} AND kind = 'reattempt'`)).length;

    // Another transaction holds the card's lock throughout the payment.
    const holder = new pg.Client(h.databaseUrl);
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
        tenantLockKey('card_reattempts', { accountId: parseId('acct', h.tenant.accountId)!, livemode: false }, pm.card.fingerprint),
      ]);
      const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the payment waited for the card’s lock')), 5_000));
      const res = await Promise.race([offSession(), timeout]);
      expect(res.body, res.text).toMatchObject({ status: 'succeeded' });
      expect(await counted()).toBe(0);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }

    await h.db.execute(sql`INSERT INTO card_reattempts (account_id, livemode, card_fingerprint, brand, kind, decline_type, payment_id, created_at)
      VALUES (${parseId('acct', h.tenant.accountId)}, false, ${pm.card.fingerprint}, 'visa', 'declined', 'generic', gen_random_uuid(), now())`);
    expect((await offSession()).body).toMatchObject({ status: 'succeeded' });
    expect(await counted()).toBe(1);
  });
});
