// The implementation plan issued at onboarding (docs/test-mode.md, going live): a checklist computed from what the
// account has really done in test mode, so that "ready for live" is evidence, not a promise. Most
// items are found in the objects the account created; what leaves no object behind (a replayed
// request, a receiver refusing a forged signature) is recorded once, when it happens.
import { and, asc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Executor } from '../../storage/db.js';
import {
  accounts,
  integrationEvidence,
  mandates,
  payments,
  payouts,
  refunds,
  webhookAttempts,
  webhookEndpoints,
} from '../../storage/schema.js';
import { toPublicId, type IdPrefix } from '../../kernel/ids.js';
import { TEST_CARDS, type TestCardScenario } from '../../connectors/simulator/cards.js';
import type { WebhookTestScenario } from '../webhooks/state.js';
import type { IntegrationPlan, PlanItem } from './schema.js';

type AccountRow = typeof accounts.$inferSelect;

export type RecordedItem = `webhook_scenario_${WebhookTestScenario}` | 'idempotent_replay';

interface ItemSpec {
  id: string;
  title: string;
  required(account: AccountRow): boolean;
  /** The evidence, from this account's test-mode data. */
  find(db: Executor, accountId: string, recorded: Map<string, string | null>): Promise<string | null>;
}

/** The oldest test-mode row of `table` matching `where`, as a public id. */
function firstOf<T extends PgTable & { accountId: PgColumn; livemode: PgColumn; id: PgColumn }>(table: T, prefix: IdPrefix, where?: (t: T) => SQL | undefined) {
  return async (db: Executor, accountId: string): Promise<string | null> => {
    const [row] = await db
      .select({ id: table.id })
      .from(table as PgTable)
      .where(and(eq(table.accountId, accountId), eq(table.livemode, false), where?.(table)))
      .orderBy(asc(table.id))
      .limit(1);
    return row ? toPublicId(prefix, row.id as string) : null;
  };
}

const always = () => true;

function recorded(id: RecordedItem, title: string): ItemSpec {
  return { id, title, required: always, find: async (_db, _account, seen) => (seen.has(id) ? (seen.get(id) ?? id) : null) };
}

/** Each card scenario of the test cards (src/connectors/simulator/cards.ts), found by the card's last four digits. */
function cardScenario(scenario: TestCardScenario, title: string): ItemSpec {
  const endings = Object.entries(TEST_CARDS)
    .filter(([, card]) => card.scenario === scenario)
    .map(([number]) => number.slice(-4));
  return {
    id: `card_${scenario}`,
    title,
    required: always,
    find: firstOf(payments, 'pay', (t) => inArray(sql`${t.paymentMethod}->'card'->>'last4'`, endings)),
  };
}

async function firstAcknowledgedEvent(db: Executor, accountId: string): Promise<string | null> {
  const [row] = await db
    .select({ eventId: webhookAttempts.eventId })
    .from(webhookAttempts)
    .where(and(eq(webhookAttempts.accountId, accountId), eq(webhookAttempts.livemode, false), eq(webhookAttempts.outcome, 'succeeded')))
    .orderBy(asc(webhookAttempts.id))
    .limit(1);
  return row ? toPublicId('evt', row.eventId) : null;
}

const ITEMS: ItemSpec[] = [
  { id: 'webhook_endpoint', title: 'Create a webhook endpoint', required: always, find: firstOf(webhookEndpoints, 'we') },
  { id: 'webhook_delivery_acknowledged', title: 'Acknowledge a webhook delivery with a 2xx answer', required: always, find: firstAcknowledgedEvent },
  recorded('webhook_scenario_deliver', 'Verify and accept a correctly signed delivery (test scenario deliver)'),
  recorded('webhook_scenario_invalid_signature', 'Refuse a delivery whose signature does not verify (test scenario invalid_signature)'),
  recorded('webhook_scenario_stale_timestamp', 'Refuse a delivery with a stale timestamp (test scenario stale_timestamp)'),
  recorded('webhook_scenario_duplicate', 'Take a duplicate delivery without acting twice (test scenario duplicate)'),
  recorded('webhook_scenario_out_of_order', 'Take deliveries out of order and keep the newer version (test scenario out_of_order)'),
  cardScenario('success', 'Pay with the success card'),
  cardScenario('decline', 'Handle a declined card'),
  cardScenario('pending', 'Handle a pending payment settled later by webhook'),
  cardScenario('timeout', 'Handle a processor timeout (the outcome is verified later)'),
  cardScenario('processor_error', 'Handle a processor error (fallback to the next connector)'),
  { id: 'refund', title: 'Refund a payment', required: always, find: firstOf(refunds, 'ref', (t) => eq(t.status, 'succeeded')) },
  recorded('idempotent_replay', 'Retry a request with the same Idempotency-Key and receive the stored answer'),
  {
    id: 'payout',
    title: 'Send a payout to a beneficiary',
    // Only accounts onboarding enabled for live payouts must have tried them.
    required: (account) => account.payoutsEnabled,
    find: firstOf(payouts, 'po', (t) => eq(t.status, 'paid')),
  },
  {
    id: 'mandate',
    title: 'Set up a direct-debit mandate',
    required: () => false,
    find: firstOf(mandates, 'mdt', (t) => inArray(t.status, ['active', 'revoked', 'expired'])),
  },
];

export const PLAN_ITEM_IDS = ITEMS.map((item) => item.id);

export async function integrationPlan(db: Executor, account: AccountRow): Promise<IntegrationPlan> {
  const rows = await db
    .select({ item: integrationEvidence.item, evidence: integrationEvidence.evidence })
    .from(integrationEvidence)
    .where(eq(integrationEvidence.accountId, account.id));
  const seen = new Map(rows.map((row) => [row.item, row.evidence]));
  const items = await Promise.all(
    ITEMS.map(async (spec): Promise<PlanItem> => {
      const evidence = await spec.find(db, account.id, seen);
      return { id: spec.id, title: spec.title, required: spec.required(account), status: evidence ? 'done' : 'open', evidence };
    }),
  );
  return { object: 'integration_plan', account: toPublicId('acct', account.id), complete: items.every((i) => !i.required || i.status === 'done'), items };
}

/** Records the first occurrence of an item; later ones change nothing. */
export async function recordEvidence(db: Executor, accountId: string, item: RecordedItem, evidence: string | null): Promise<void> {
  await db.insert(integrationEvidence).values({ accountId, item, evidence }).onConflictDoNothing();
}

/** Accounts whose replay is already recorded by this process: a replay storm writes once. */
const replaysRecorded = new Set<string>();

export async function recordReplay(db: Executor, accountId: string, requestId: string): Promise<void> {
  if (replaysRecorded.has(accountId)) return;
  await recordEvidence(db, accountId, 'idempotent_replay', requestId);
  replaysRecorded.add(accountId);
}

/** The caller's own plan (GET /v1/account/integration): the account is the key's, whatever its mode. */
export async function callerPlan(db: Executor, accountId: string): Promise<IntegrationPlan> {
  const [account] = await db.select().from(accounts).where(eq(accounts.id, accountId));
  return integrationPlan(db, account!);
}
