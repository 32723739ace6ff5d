// The payout test helper at any moment after create: POST /v1/test-helpers/payouts/{id}/resolve
// right after POST /v1/payouts, while the submission right after create (or a worker's) may have
// claimed the payout and be calling the simulated bank. It used to answer 422 ("processing …
// allowed from: processing at a bank") most of the time; it must resolve every time.
import { describe, expect, it } from 'vitest';
import { expectLedgerClean, fund, newBeneficiary, payout } from '../support/payouts.js';
import { balanceOf } from '../support/payments.js';
import { useService, type ServiceFixture } from '../support/fixtures.js';


const OUTCOMES = [
  ['paid', 'paid'],
  ['failed', 'failed'],
  ['returned', 'returned'],
] as const;
const ROUNDS = 12;

async function resolveRightAfterCreate(h: ServiceFixture) {
  const { api, accountId } = h.tenant;
  await fund(api, 100_000);
  const pending = await newBeneficiary(api, '0003');
  for (let round = 0; round < ROUNDS; round++) {
    const [outcome, status] = OUTCOMES[round % OUTCOMES.length]!;
    const created = await payout(api, pending.id, 100);
    expect(created.status, created.text).toBe(201);
    const resolved = await api.post(`/v1/test-helpers/payouts/${created.body.id}/resolve`, { outcome });
    expect(resolved.status, `round ${round}: ${resolved.text}`).toBe(200);
    expect(resolved.body).toMatchObject({ id: created.body.id, status, connector: 'simulator_a' });
  }
  // Every payout settled once: 4 paid, 4 failed (money back), 4 returned (money back).
  expect(await balanceOf(api)).toEqual({ available: 100_000 - 4 * 100, reserved: 0, pending: 0 });
  await expectLedgerClean(h.db, accountId);
  return api;
}

describe('resolve right after create, the submission right after create racing it', () => {
  const h = useService({ submitOnCreate: true });

  it(`a pending account (0003): ${ROUNDS} immediate resolves, each answered with the outcome asked for`, async () => {
    await resolveRightAfterCreate(h);
  });

  it('the timeout account (0004) and the processor-error account (0005) resolve at once too', async () => {
    const { api } = h;
    await fund(api, 10_000);
    // 0004: the bank paid but never answered; the helper reports the truth whatever was asked.
    const unanswered = await newBeneficiary(api, '0004');
    const a = await payout(api, unanswered.id, 100);
    const resolvedA = await api.post(`/v1/test-helpers/payouts/${a.body.id}/resolve`, { outcome: 'failed' });
    expect(resolvedA.status, resolvedA.text).toBe(200);
    expect(resolvedA.body).toMatchObject({ status: 'paid', connector: 'simulator_a' });
    // 0005: simulator_a fails, the payout goes to simulator_b, where it pays at once.
    const fallback = await newBeneficiary(api, '0005');
    const b = await payout(api, fallback.id, 100);
    const resolvedB = await api.post(`/v1/test-helpers/payouts/${b.body.id}/resolve`, { outcome: 'returned' });
    expect(resolvedB.status, resolvedB.text).toBe(200);
    expect(resolvedB.body).toMatchObject({ status: 'returned', connector: 'simulator_b' });
  });
});

describe('resolve right after create, a worker racing it', () => {
  const h = useService({ submitOnCreate: false, overrides: { roles: ['api', 'worker'], workerIntervalMs: 10 } });

  // Many rounds against a worker polling every 10 ms: slow on a loaded machine, hence the time.
  it(`a pending account (0003): ${ROUNDS} immediate resolves`, async () => {
    await resolveRightAfterCreate(h);
  }, 90_000);
});
