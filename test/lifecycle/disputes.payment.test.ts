// A payment answers its disputes (docs/disputes.md): `disputed` and `disputes` (dp_ ids, oldest
// first) when read, listed, and on the dashboard's payment page; a payment never disputed is viewed
// without reading disputes (its dispute_count, counted when a dispute is recorded, says there are none).
import { describe, expect, it } from 'vitest';
import { useService } from '../support/fixtures.js';
import { eventually } from '../support/helpers.js';
import { Visitor } from '../support/dashboard.js';
import { newOrder, pay } from '../support/payments.js';
import { disputeIdsByPayment } from '../../src/domain/payments/disputed.js';
import type { Executor } from '../../src/storage/db.js';

const DISPUTED = '4000000000000259';
const h = useService({ settings: { simulator: { pendingDelayMs: 200 } } });
const { api } = h;

describe('disputes on the payment object', () => {
  it('a disputed payment answers disputed and its dp_ ids; one never disputed answers none', async () => {
    const order = await newOrder(api, { amount: 3100, currency: 'EUR' });
    const created = await pay(api, order.id, DISPUTED);
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ status: 'succeeded', disputed: false, disputes: [] });
    const version = created.body.version as number;

    const disputes = await eventually(
      async () => (await api.get(`/v1/disputes?payment=${created.body.id}`)).body.data as { id: string }[],
      (list) => list.length === 1,
    );
    const read = (await api.get(`/v1/payments/${created.body.id}`)).body;
    expect(read).toMatchObject({ disputed: true, disputes: [disputes[0]!.id] });
    // Its view changed: so did its version.
    expect(read.version).toBeGreaterThan(version);
    const listed = (await api.get(`/v1/payments?payment_order=${order.id}`)).body.data[0];
    expect(listed).toMatchObject({ id: created.body.id, disputed: true, disputes: [disputes[0]!.id] });

    const plain = await pay(api, (await newOrder(api, { amount: 500, currency: 'EUR' })).id);
    expect(plain.body).toMatchObject({ status: 'succeeded', disputed: false, disputes: [] });
    expect((await api.get(`/v1/payments/${plain.body.id}`)).body).toMatchObject({ disputed: false, disputes: [] });

    // The dashboard's payment page names the dispute, linked to its page.
    const dashboard = await Visitor.signedIn(h.url, h.tenant.testKey);
    const page = await dashboard.get(`/dashboard/payments/${created.body.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<dt>Disputed</dt>');
    expect(page.text).toContain(`/dashboard/disputes/${disputes[0]!.id}`);
    const plainPage = await dashboard.get(`/dashboard/payments/${plain.body.id}`);
    expect(plainPage.text).toContain('<dt>Disputed</dt><dd>no</dd>');
    expect(plainPage.text).not.toContain('/dashboard/disputes/dp_');
  });

  it('reads disputes only for payments counted disputed', async () => {
    const owner = { accountId: '00000000-0000-0000-0000-000000000000', livemode: false };
    const untouchable = new Proxy({}, {
      get: () => {
        throw new Error('queried');
      },
    }) as Executor;
    const none = await disputeIdsByPayment(untouchable, owner, [{ id: 'a', disputeCount: 0 }, { id: 'b', disputeCount: 0 }]);
    expect(none.size).toBe(0);
    await expect(disputeIdsByPayment(untouchable, owner, [{ id: 'a', disputeCount: 1 }])).rejects.toThrow('queried');
  });
});
