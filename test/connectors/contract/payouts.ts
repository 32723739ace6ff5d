// The connector contract for payouts: the scenarios every payout processor passes, each through the
// service's HTTP API (the worker's submission, the movement core, the inbound webhooks), run over
// every payout harness (payout-harnesses.ts) by test/connectors/contract.payouts.test.ts, and the
// ones needing no fake against a real sandbox by `npm run connectors:smoke -- adyen-payouts`. Each
// tenant's payouts route to the processor first, then to simulator_b. The crash scenarios are in
// test/engine/crash.payouts.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RuntimeOptions } from '../../../src/runtime.js';
import { useService } from '../../support/fixtures.js';
import type { Api, PaymentsSettings } from '../../support/helpers.js';
import { balanceOf, eventTypesOf } from '../../support/payments.js';
import { fund, newBeneficiary, payout, type Format } from '../../support/payouts.js';
import { postWebhook, type Connected, type ProcessorHarness, type Webhook } from './harness.js';
import { BACKUP } from './scenarios.js';

export type PayoutCapability = 'faults' | 'books' | 'settle' | 'webhooks' | 'processes';
export type PayoutOutcome = 'paid' | 'failed' | 'returned';

/** A payout as the API shows it, as far as a harness needs it. */
export interface PayoutLike {
  id: string;
  connector_reference: string | null;
}

export interface PayoutHarness {
  readonly name: string;
  readonly capabilities: ReadonlySet<PayoutCapability>;
  /** A beneficiary account whose payouts the processor takes and holds in transit (its outcome comes later). */
  readonly account: { ending: '0000' | '0003'; format: Format };
  start(): Promise<void>;
  close(): Promise<void>;
  service(): { settings?: PaymentsSettings; runtime?: RuntimeOptions };
  processEnv(): Record<string, string>;
  connect(api: Api, serviceUrl: string): Promise<Connected>;
  books?: {
    /** Payouts the processor holds under our payout id. */
    held(payoutId: string): Promise<number>;
    /** Payout requests it received under our id, replays included. */
    requests(payoutId: string): Promise<number>;
  };
  faults?: ProcessorHarness['faults'];
  /** Settles the payout at the processor (no webhook yet); `returned` on a paid one sends it back. */
  settle?(payout: PayoutLike, outcome: PayoutOutcome): Promise<void>;
  /** The processor's webhook of the payout as the processor holds it now, signed (or badly). */
  webhook?(connected: Connected, payout: PayoutLike, signing?: 'wrong_secret' | 'stale'): Promise<Webhook | undefined>;
  readonly webhookAcknowledgement?: string;
}

export interface PayoutContext {
  api: Api;
  harness: PayoutHarness;
  processor: Connected;
  /** One worker pass over payouts (submission and status checks), the clock moved past the check interval first. */
  work(): Promise<void>;
}

export interface PayoutScenario {
  name: string;
  needs: readonly PayoutCapability[];
  run(ctx: PayoutContext): Promise<void>;
}

const FUNDS = 100_000;
const CURRENCY_OF: Record<Format, string> = { iban: 'EUR', gb: 'GBP', us: 'USD', in: 'INR' };

/** A payout created (the balance funded first) and given to the worker's pass; its id and currency. */
async function submitted(ctx: PayoutContext, amount: number) {
  const { ending, format } = ctx.harness.account;
  const currency = CURRENCY_OF[format];
  await fund(ctx.api, FUNDS, currency);
  const ben = await newBeneficiary(ctx.api, ending, format);
  const res = await payout(ctx.api, ben.id, amount, currency);
  expect(res.status, res.text).toBe(201);
  await ctx.work();
  return { id: res.body.id as string, currency };
}

/** A payout created and submitted: processing at the processor. */
async function sent(ctx: PayoutContext, amount = 1000) {
  const { id, currency } = await submitted(ctx, amount);
  const body = (await ctx.api.get(`/v1/payouts/${id}`)).body;
  expect(body).toMatchObject({ status: 'processing', connector: ctx.processor.connector, connector_reference: expect.any(String) });
  if (ctx.harness.books) expect([await ctx.harness.books.held(body.id), await ctx.harness.books.requests(body.id)]).toEqual([1, 1]);
  return { payout: body, currency };
}

async function deliver(ctx: PayoutContext, p: PayoutLike, signing?: 'wrong_secret' | 'stale') {
  const webhook = await ctx.harness.webhook!(ctx.processor, p, signing);
  return webhook && postWebhook(ctx.processor.webhookUrl, webhook);
}

function expectAccepted(ctx: PayoutContext, res: { status: number; text: string } | undefined) {
  expect(res?.status, res?.text).toBe(200);
  if (ctx.harness.webhookAcknowledgement) expect(res!.text).toBe(ctx.harness.webhookAcknowledgement);
}

/** Settled at the processor and reported by its webhook. */
async function settled(ctx: PayoutContext, p: PayoutLike, outcome: PayoutOutcome) {
  await ctx.harness.settle!(p, outcome);
  expectAccepted(ctx, await deliver(ctx, p));
  return (await ctx.api.get(`/v1/payouts/${p.id}`)).body;
}

const balance = (ctx: PayoutContext, currency: string) => balanceOf(ctx.api, currency);

export const PAYOUT_SCENARIOS: readonly PayoutScenario[] = [
  {
    name: 'payout taken by the processor: processing, its reference recorded, the amount reserved',
    needs: [],
    async run(ctx) {
      const { payout: p, currency } = await sent(ctx, 1500);
      expect(p.attempts.map((a: { connector: string; outcome: string }) => [a.connector, a.outcome])).toEqual([[ctx.processor.connector, 'pending']]);
      expect(await balance(ctx, currency)).toEqual({ available: FUNDS - 1500, reserved: 1500, pending: 0 });
    },
  },
  {
    name: 'payout paid by the processor’s webhook: the reserved amount leaves',
    needs: ['settle', 'webhooks'],
    async run(ctx) {
      const { payout: p, currency } = await sent(ctx, 2000);
      expect(await settled(ctx, p, 'paid')).toMatchObject({ status: 'paid', connector: ctx.processor.connector });
      expect(await balance(ctx, currency)).toEqual({ available: FUNDS - 2000, reserved: 0, pending: 0 });
      expect(await eventTypesOf(ctx.api, p.id)).toEqual(['payout.created', 'payout.processing', 'payout.paid']);
    },
  },
  {
    name: 'payout failed by the processor’s webhook: the reservation is released',
    needs: ['settle', 'webhooks'],
    async run(ctx) {
      const { payout: p, currency } = await sent(ctx, 2100);
      expect(await settled(ctx, p, 'failed')).toMatchObject({ status: 'failed', failure_code: expect.any(String) });
      expect(await balance(ctx, currency)).toEqual({ available: FUNDS, reserved: 0, pending: 0 });
      expect(await eventTypesOf(ctx.api, p.id)).toEqual(['payout.created', 'payout.processing', 'payout.failed']);
    },
  },
  {
    name: 'payout paid, then returned by the beneficiary’s bank: the money comes back',
    needs: ['settle', 'webhooks'],
    async run(ctx) {
      const { payout: p, currency } = await sent(ctx, 2200);
      expect(await settled(ctx, p, 'paid')).toMatchObject({ status: 'paid' });
      expect(await settled(ctx, p, 'returned')).toMatchObject({ status: 'returned', failure_code: expect.any(String) });
      expect(await balance(ctx, currency)).toEqual({ available: FUNDS, reserved: 0, pending: 0 });
      expect(await eventTypesOf(ctx.api, p.id)).toEqual(['payout.created', 'payout.processing', 'payout.paid', 'payout.returned']);
    },
  },
  {
    name: 'a duplicate payout webhook is applied once',
    needs: ['settle', 'webhooks'],
    async run(ctx) {
      const { payout: p } = await sent(ctx, 2300);
      await ctx.harness.settle!(p, 'paid');
      const webhook = (await ctx.harness.webhook!(ctx.processor, p))!;
      expectAccepted(ctx, await postWebhook(ctx.processor.webhookUrl, webhook));
      expectAccepted(ctx, await postWebhook(ctx.processor.webhookUrl, webhook));
      expect(await eventTypesOf(ctx.api, p.id)).toEqual(['payout.created', 'payout.processing', 'payout.paid']);
    },
  },
  {
    name: 'payout webhooks out of order: the in-transit report after the final one changes nothing',
    needs: ['settle', 'webhooks'],
    async run(ctx) {
      const { payout: p } = await sent(ctx, 2400);
      const inTransit = (await ctx.harness.webhook!(ctx.processor, p))!;
      const final = await settled(ctx, p, 'failed');
      expectAccepted(ctx, await postWebhook(ctx.processor.webhookUrl, inTransit));
      expect((await ctx.api.get(`/v1/payouts/${p.id}`)).body).toEqual(final);
    },
  },
  {
    name: 'payout webhooks signed with another secret, or stale, are refused and change nothing',
    needs: ['settle', 'webhooks'],
    async run(ctx) {
      const { payout: p } = await sent(ctx, 2500);
      await ctx.harness.settle!(p, 'paid');
      for (const signing of ['wrong_secret', 'stale'] as const) {
        const res = await deliver(ctx, p, signing);
        if (res) expect(res.status, res.text).toBe(401);
      }
      expect((await ctx.api.get(`/v1/payouts/${p.id}`)).body).toMatchObject({ status: 'processing', version: p.version });
    },
  },
  {
    name: 'payout refused before acting (429 or its equivalent): the next connector pays it',
    needs: ['faults'],
    async run(ctx) {
      ctx.harness.faults!.refuseNext();
      const { id } = await submitted(ctx, 2600);
      const after = (await ctx.api.get(`/v1/payouts/${id}`)).body;
      expect(after).toMatchObject({ connector: BACKUP });
      expect(after.attempts.map((a: { connector: string; error_code: string | null }) => [a.connector, a.error_code])).toEqual([
        [ctx.processor.connector, 'processor_error'],
        [BACKUP, null],
      ]);
      if (ctx.harness.books) expect(await ctx.harness.books.held(id)).toBe(0);
    },
  },
  {
    name: 'payout answered 500 after acting: processing, never sent elsewhere; the status check finds the one payout',
    needs: ['faults', 'books'],
    async run(ctx) {
      ctx.harness.faults!.serverErrorAfterNext();
      const { id } = await submitted(ctx, 2700);
      expect((await ctx.api.get(`/v1/payouts/${id}`)).body).toMatchObject({ status: 'processing', connector: ctx.processor.connector, connector_reference: null });
      await ctx.work();
      expect((await ctx.api.get(`/v1/payouts/${id}`)).body).toMatchObject({ status: 'processing', connector: ctx.processor.connector, connector_reference: expect.any(String) });
      expect([await ctx.harness.books!.held(id), await ctx.harness.books!.requests(id)]).toEqual([1, 1]);
    },
  },
];

/** The payout routing of a tenant: the processor, then the backup. */
export async function routePayoutsThrough(api: Api, processor: Connected) {
  const res = await api.request('PUT', '/v1/routing', { body: { rules: [{ payment_method_types: ['payout'], connectors: [processor.route, { name: BACKUP }] }] } });
  expect(res.status, res.text).toBe(200);
}

export function describePayoutContract(title: string, harness: PayoutHarness, settings: PaymentsSettings, opts: { onlyRunnable?: boolean } = {}) {
  describe(title, () => {
    beforeAll(() => harness.start());
    afterAll(() => harness.close());
    const h = useService({
      submitOnCreate: false,
      late: () => {
        const own = harness.service();
        return { settings: { circuitBreaker: { failureThreshold: 1000 }, ...settings, ...own.settings }, runtime: own.runtime };
      },
    });
    // Past the check time of a payout whose answer was lost (one status-check interval).
    const work = async () => {
      h.service.clock.advance(h.service.config.payments.statusCheckIntervalMs + 1);
      await h.service.runPayouts();
    };
    for (const scenario of PAYOUT_SCENARIOS) {
      const can = scenario.needs.every((need) => harness.capabilities.has(need));
      if (opts.onlyRunnable && !can) continue;
      // A tenant per scenario, so that each starts from its own balance.
      it.skipIf(!can)(scenario.name, async () => {
        const { api } = await h.newTenant();
        const processor = await harness.connect(api, h.url);
        await routePayoutsThrough(api, processor);
        await scenario.run({ api, harness, processor, work });
      });
    }
  });
}
