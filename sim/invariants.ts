// The money invariants of the simulation, each a small named function over the database, the
// outside world's books and what the merchants were told. A function returns what it found wrong
// (empty: holds). `every step` ones run after each step; `at the end` ones once the world has been
// drained (receivers up, faults off, the clock far past every deadline).
import { sql } from 'drizzle-orm';
import { checkLedger } from '../src/ledger/check.js';
import { toPublicId, type IdPrefix } from '../src/kernel/ids.js';
import { paymentStates } from '../src/domain/payments/state.js';
import { paymentOrderStates } from '../src/domain/payment-orders/state.js';
import { refundStates } from '../src/domain/refunds/state.js';
import { captureStates } from '../src/domain/captures/state.js';
import { payoutStates } from '../src/domain/payouts/state.js';
import { mandateStates } from '../src/domain/mandates/state.js';
import type { StateMachine } from '../src/kernel/state-machine.js';
import { attemptReferenceOf, publicIdOfReference } from '../src/movement/kind.js';
import { processorsByRouteKey, rows, type Invariant, type Row } from './query.js';
import { ATTEMPT_INVARIANTS } from './invariants-attempts.js';
import { disputesEndAsTheProcessorDecided, MONEY_INVARIANTS } from './invariants-money.js';

export type { Invariant } from './query.js';

export const journalBalancesAndMatchesBalances: Invariant = async (s) => {
  const report = await checkLedger(s.database.db);
  if (report.ok) return [];
  return [
    ...report.unbalancedEntries.map((e) => `entry ${e.entry_id} sums to ${e.sum}`),
    ...report.balanceDifferences.map((d) => `${d.ledger_account} ${d.currency}: journal ${d.from_journal}, stored ${d.stored}`),
    ...report.postingMismatches.map((m) => `${m.object} ${m.status}: expected entries ${m.expected}, found ${m.found}`),
  ];
};

export const noOrderPaidTwice: Invariant = async (s) =>
  (await rows(s.database.db, sql`
    SELECT o.id::text, o.amount, o.amount_paid, count(p.id)::int AS succeeded FROM payment_orders o
    LEFT JOIN payments p ON p.account_id = o.account_id AND p.payment_order_id = o.id AND p.status = 'succeeded'
    GROUP BY o.id, o.amount, o.amount_paid HAVING count(p.id) > 1 OR o.amount_paid > o.amount`)).map((r) => `order ${r.id}: ${r.succeeded} succeeded payments, paid ${r.amount_paid} of ${r.amount}`);

export const noPaymentSucceededWithoutCharge: Invariant = async (s) => {
  const db = s.database.db;
  const processorOf = await processorsByRouteKey(db);
  // Captured, or (a manual payment closed at its lapse, src/domain/captures/jobs.ts) still authorised with some of it captured.
  const held = new Set(
    (await rows(db, sql`SELECT processor, reference FROM simulator_objects WHERE kind = 'charge' AND (body->>'state' = 'CAPTURED' OR (body->>'state' = 'AUTHORISED' AND coalesce((body->>'captured_minor')::bigint, 0) > 0))`)).map(
      (r) => `${r.processor}/${r.reference}`,
    ),
  );
  // The charge of the attempt that took it (a cascaded attempt n > 1 is held under pay_…_n).
  const succeeded = await rows(db, sql`SELECT id::text, connector, attempt_number FROM payments WHERE status = 'succeeded'`);
  return succeeded
    .filter((p) => !held.has(`${processorOf(p.connector)}/${attemptReferenceOf(toPublicId('pay', p.id), p.attempt_number)}`))
    .map((p) => `payment ${toPublicId('pay', p.id)} succeeded (attempt ${p.attempt_number}), but ${p.connector} holds no captured charge of it`);
};

/** A charge captured at a processor belongs to a payment that is not failed and names that processor (else the customer paid for nothing). */
export const noCapturedChargeOfAFailedPayment: Invariant = async (s) => {
  const db = s.database.db;
  const processorOf = await processorsByRouteKey(db);
  const payments = new Map((await rows(db, sql`SELECT id::text, status, connector FROM payments`)).map((p) => [toPublicId('pay', p.id), p]));
  return (await rows(db, sql`SELECT processor, reference FROM simulator_objects WHERE kind = 'charge' AND body->>'state' = 'CAPTURED'`))
    .filter((c) => {
      const p = payments.get(publicIdOfReference(c.reference));
      return !p || p.status === 'failed' || (p.status === 'succeeded' && processorOf(p.connector) !== c.processor);
    })
    .map((c) => {
      const p = payments.get(publicIdOfReference(c.reference));
      return `${c.processor} captured ${c.reference}, which is ${p?.status ?? 'unknown'} at ${p?.connector ?? 'no connector'}`;
    });
};

export const noChargeSentAgainOnceHeld: Invariant = async (s) => s.world.recharges.map((r) => `charge sent again for ${r}`);

export const refundsNeverExceedPayment: Invariant = async (s) =>
  (await rows(s.database.db, sql`
    SELECT p.id::text, p.amount, p.amount_refunded, coalesce(sum(r.amount) FILTER (WHERE r.status <> 'failed'), 0)::bigint AS refunds
    FROM payments p LEFT JOIN refunds r ON r.account_id = p.account_id AND r.payment_id = p.id
    GROUP BY p.id, p.amount, p.amount_refunded
    HAVING coalesce(sum(r.amount) FILTER (WHERE r.status <> 'failed'), 0) > p.amount OR p.amount_refunded > p.amount`)).map((r) => `payment ${r.id}: refunds ${r.refunds} (counted ${r.amount_refunded}) above ${r.amount}`);

/** Replays the refund events in order: what a payment's refunds hold (created, not failed) never exceeds it at any moment. */
export const refundsNeverExceedPaymentAtAnyMoment: Invariant = async (s) => {
  const db = s.database.db;
  const amounts = new Map((await rows(db, sql`SELECT id::text, amount FROM payments`)).map((p) => [toPublicId('pay', p.id), Number(p.amount)]));
  const held = new Map<string, number>();
  const found: string[] = [];
  for (const e of await rows(db, sql`SELECT type, data->'object'->>'payment' AS payment, (data->'object'->>'amount')::bigint AS amount FROM events WHERE type IN ('refund.created', 'refund.failed') ORDER BY created_at, id`)) {
    const total = (held.get(e.payment) ?? 0) + (e.type === 'refund.created' ? Number(e.amount) : -Number(e.amount));
    held.set(e.payment, total);
    if (total > (amounts.get(e.payment) ?? 0)) found.push(`payment ${e.payment}: refunds held ${total} above its amount ${amounts.get(e.payment)}`);
  }
  return [...new Set(found)];
};

/**
 * Every unsealing of the vault names a movement — a payment of the record's own account and mode —
 * that holds that very card: its saved card, the card it saves, or its typed card kept in flight.
 */
export const noUnsealingWithoutAMovement: Invariant = async (s) => {
  const db = s.database.db;
  const payments = new Map(
    (await rows(db, sql`SELECT account_id::text AS account, livemode, id::text, payment_method FROM payments`)).map((p) => [
      `${p.account}/${p.livemode}/${toPublicId('pay', p.id)}`,
      p.payment_method as Row,
    ]),
  );
  const found: string[] = [];
  for (const u of await rows(db, sql`SELECT record_id::text AS record, account_id::text AS account, livemode, movement_type, movement_id FROM vault_unsealings ORDER BY id`)) {
    const record = toPublicId('vr', u.record);
    const method = u.movement_type === 'payment' ? payments.get(`${u.account}/${u.livemode}/${u.movement_id}`) : undefined;
    if (!method) found.push(`vault record ${record} unsealed for ${u.movement_type} ${u.movement_id}, which is no payment of its account and mode`);
    else if (![method.saved_card?.vault_record, method.setup?.vault_record, method.in_flight_record].includes(record)) found.push(`vault record ${record} unsealed for ${u.movement_id}, which holds another card`);
  }
  return found;
};

export const payoutsNeverOverdraw: Invariant = async (s) =>
  (await rows(s.database.db, sql`
    SELECT account_id::text, livemode, currency, -sum(balance)::bigint AS available FROM ledger_balances
    WHERE ledger_account = 'merchant_available' GROUP BY 1, 2, 3 HAVING -sum(balance) < 0`)).map((r) => `account ${r.account_id} ${r.currency}: available ${r.available}`);

const MACHINES: Record<string, [StateMachine<string>, IdPrefix, string]> = {
  payment: [paymentStates as StateMachine<string>, 'pay', 'payments'],
  payment_order: [paymentOrderStates as StateMachine<string>, 'ord', 'payment_orders'],
  refund: [refundStates as StateMachine<string>, 'ref', 'refunds'],
  payout: [payoutStates as StateMachine<string>, 'po', 'payouts'],
  mandate: [mandateStates as StateMachine<string>, 'mdt', 'mandates'],
  capture: [captureStates as StateMachine<string>, 'cap', 'captures'],
};

/** Per object, its events by version: versions strictly increase, each status step is in the table, and the last event announces the row's status. */
export const legalTransitionsAndIncreasingVersions: Invariant = async (s) => {
  const db = s.database.db;
  const found: string[] = [];
  const events = await rows(db, sql`SELECT object_id, type, data->'object'->>'object' AS object, data->'object'->>'status' AS status, (data->'object'->>'version')::int AS version FROM events ORDER BY created_at, id`);
  const byObject = new Map<string, Row[]>();
  for (const e of events) if (MACHINES[e.object]) byObject.set(e.object_id, [...(byObject.get(e.object_id) ?? []), e]);
  for (const [id, list] of byObject) {
    const machine = MACHINES[list[0]!.object]![0];
    const byVersion = [...list].sort((a, b) => a.version - b.version);
    for (let i = 1; i < byVersion.length; i++) {
      const [a, b] = [byVersion[i - 1]!, byVersion[i]!];
      if (a.version === b.version && a.status !== b.status) found.push(`${id}: two events at version ${a.version} with statuses ${a.status} and ${b.status}`);
      if (a.status !== b.status && !machine.can(a.status, b.status)) found.push(`${id}: ${a.status} -> ${b.status} (v${a.version} -> v${b.version}) is not in the ${machine.objectName} table`);
    }
  }
  for (const [object, [, prefix, table]] of Object.entries(MACHINES)) {
    const current = await rows(db, sql`SELECT id::text, status, version FROM ${sql.raw(table)}`);
    for (const row of current) {
      const id = toPublicId(prefix, row.id);
      const last = (byObject.get(id) ?? []).reduce<Row | undefined>((m, e) => (!m || e.version > m.version ? e : m), undefined);
      if (!last) found.push(`${object} ${id} (${row.status}, v${row.version}) has no event`);
      // A change of other fields (amount_refunded) may bump the version unannounced; a change of status may not.
      else if (last.version > row.version || last.status !== row.status) found.push(`${object} ${id} is ${row.status} v${row.version}, its last event says ${last.status} v${last.version}`);
    }
  }
  return found;
};

export const acknowledgedWritesKept: Invariant = async (s, model) => {
  const found: string[] = [];
  for (const [object, [, prefix, table]] of Object.entries(MACHINES)) {
    const stored = new Map((await rows(s.database.db, sql`SELECT id::text, version FROM ${sql.raw(table)}`)).map((r) => [toPublicId(prefix, r.id), r.version as number]));
    for (const [id, seen] of model.acknowledged) {
      if (seen.object !== object) continue;
      const version = stored.get(id);
      if (version === undefined) found.push(`${object} ${id} was acknowledged and is gone`);
      else if (version < seen.version) found.push(`${object} ${id} was acknowledged at v${seen.version}, stored v${version}`);
    }
  }
  return found;
};

export const replaysAnswerTheSameBytes: Invariant = async (_s, model) => model.violations;

/** At the end: every event fanned out to each endpoint is succeeded or abandoned (failed/cancelled), and each receiver saw one webhook-id per event. */
export const everyEventDeliveredOrAbandoned: Invariant = async (s) => {
  const found = (await rows(s.database.db, sql`
    SELECT e.id::text, e.type FROM events e WHERE e.dispatched_at IS NULL`)).map((e) => `event ${e.id} (${e.type}) never fanned out`);
  const pending = await rows(s.database.db, sql`SELECT id::text, attempts FROM webhook_deliveries WHERE status = 'pending'`);
  found.push(...pending.map((d) => `delivery ${d.id} still pending after ${d.attempts} attempts`));
  for (const [url, byEvent] of s.receivers.seen) {
    for (const [event, seen] of byEvent) if (seen.ids.size > 1) found.push(`${url} got ${event} under ${seen.ids.size} webhook-ids`);
  }
  return found;
};

/**
 * At the end: each event reached every endpoint subscribed to it — enabled, and unchanged since
 * strictly before the event (the simulated clock stands still within a step, and an endpoint made
 * at the event's instant may come after its fan-out), so that no edit could excuse it — with a delivery that succeeded or was
 * abandoned after its schedule; and a delivery recorded as succeeded was acknowledged by its
 * receiver for that event (the books of both sides agree).
 */
export const everySubscribedEndpointServed: Invariant = async (s) => {
  const db = s.database.db;
  const unserved = await rows(db, sql`
    SELECT e.id::text AS event, e.type, w.id::text AS endpoint
    FROM events e
    JOIN webhook_endpoints w ON w.account_id = e.account_id AND w.livemode = e.livemode
    WHERE w.status = 'enabled' AND w.deleted_at IS NULL AND w.updated_at < e.created_at
      AND (e.type = ANY(w.enabled_events) OR '*' = ANY(w.enabled_events) OR split_part(e.type, '.', 1) || '.*' = ANY(w.enabled_events))
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                      WHERE d.account_id = e.account_id AND d.event_id = e.id AND d.endpoint_id = w.id AND d.status IN ('succeeded', 'failed'))`);
  const found = unserved.map((u) => `event ${u.event} (${u.type}) never served to subscribed endpoint ${u.endpoint}`);
  const succeeded = await rows(db, sql`
    SELECT d.event_id::text AS event, w.url FROM webhook_deliveries d
    JOIN webhook_endpoints w ON w.account_id = d.account_id AND w.id = d.endpoint_id
    WHERE d.status = 'succeeded' AND d."trigger" = 'event'`);
  for (const d of succeeded) {
    const seen = s.receivers.seen.get(d.url)?.get(toPublicId('evt', d.event));
    if (!seen?.acknowledged) found.push(`delivery of ${d.event} to ${d.url} recorded as succeeded, but the receiver never acknowledged it`);
  }
  return found;
};

/** A manual payment's captures never take more than it authorised, and what it says it captured is what its captures took. */
export const capturedNeverAboveAuthorised: Invariant = async (s) =>
  (await rows(s.database.db, sql`
    SELECT p.id::text, p.amount, p.amount_captured, p.amount_capturable,
      coalesce(sum(c.amount) FILTER (WHERE c.status = 'succeeded'), 0)::bigint AS succeeded,
      coalesce(sum(c.amount) FILTER (WHERE c.status <> 'failed'), 0)::bigint AS held
    FROM payments p LEFT JOIN captures c ON c.account_id = p.account_id AND c.payment_id = p.id
    WHERE p.capture_method = 'manual'
    GROUP BY p.id, p.amount, p.amount_captured, p.amount_capturable
    HAVING coalesce(sum(c.amount) FILTER (WHERE c.status <> 'failed'), 0) > p.amount OR p.amount_captured + p.amount_capturable > p.amount
      OR coalesce(sum(c.amount) FILTER (WHERE c.status = 'succeeded'), 0) <> p.amount_captured`)).map(
    (r) => `payment ${r.id}: authorised ${r.amount}, captured ${r.amount_captured} (captures succeeded ${r.succeeded}, taken or pending ${r.held}), capturable ${r.amount_capturable}`,
  );

/**
 * What the ledger holds for a manual payment (its captures and its refunds, at the processor's
 * clearing account) is what was captured less what was refunded; the processor's fees a
 * reconciliation booked against it (processor_fee, the service's cost) are not the merchant's money.
 */
export const bookedIsCapturedLessRefunded: Invariant = async (s) =>
  (await rows(s.database.db, sql`
    SELECT p.id::text, p.amount_captured, p.amount_refunded, coalesce(sum(l.amount), 0)::bigint AS booked
    FROM payments p
    LEFT JOIN journal_entries e ON e.account_id = p.account_id
      AND e.type <> 'processor_fee' AND (e.source_id = p.id OR e.source_id IN (SELECT r.id FROM refunds r WHERE r.account_id = p.account_id AND r.payment_id = p.id))
    LEFT JOIN journal_lines l ON l.account_id = e.account_id AND l.entry_id = e.id AND l.ledger_account = 'processor_clearing'
    WHERE p.capture_method = 'manual'
    GROUP BY p.id, p.amount_captured, p.amount_refunded
    HAVING coalesce(sum(l.amount), 0) <> p.amount_captured - p.amount_refunded`)).map(
    (r) => `payment ${r.id}: booked ${r.booked}, captured ${r.amount_captured} less refunded ${r.amount_refunded}`,
  );

/**
 * No capture after a void: a payment whose authorisation was voided (canceled, or a void of it
 * succeeded) has captured nothing in our books (no succeeded capture, nothing booked for it), and
 * a charge the simulator voided has no capture it took.
 */
export const noCaptureAfterVoid: Invariant = async (s) => {
  const db = s.database.db;
  const ours = await rows(db, sql`
    SELECT p.id::text, p.status, p.amount_captured FROM payments p
    WHERE (p.status = 'canceled' OR EXISTS (SELECT 1 FROM voids v WHERE v.account_id = p.account_id AND v.payment_id = p.id AND v.status = 'succeeded'))
      AND (p.amount_captured > 0
        OR EXISTS (SELECT 1 FROM captures c WHERE c.account_id = p.account_id AND c.payment_id = p.id AND c.status = 'succeeded')
        OR EXISTS (SELECT 1 FROM journal_entries e WHERE e.account_id = p.account_id AND e.source_id = p.id AND e.type = 'payment'))`);
  const theirs = await rows(db, sql`
    SELECT c.processor, c.reference FROM simulator_objects c
    WHERE c.kind = 'charge' AND c.body->>'state' = 'VOIDED'
      AND (coalesce((c.body->>'captured_minor')::bigint, 0) > 0 OR EXISTS (SELECT 1 FROM simulator_objects k
        WHERE k.processor = c.processor AND k.kind = 'capture' AND k.body->>'charge_id' = c.body->>'charge_id' AND k.body->>'state' = 'CAPTURED'))`);
  return [
    ...ours.map((r) => `payment ${toPublicId('pay', r.id)} was voided (${r.status}) but captured ${r.amount_captured} or has a succeeded capture or a booking`),
    ...theirs.map((r) => `${r.processor} voided the charge of ${r.reference} but holds a capture of it`),
  ];
};

/** At the end: with the clock past every deadline, nothing waits any more. */
export const nothingPendingForever: Invariant = async (s) => {
  const db = s.database.db;
  const q = async (what: string, query: ReturnType<typeof sql>) => (await rows(db, query)).map((r) => `${what} ${r.id} still ${r.status}`);
  return [
    // An authorisation too: past capture_before the worker voids it (expired) or closes it at what was captured.
    ...(await q('payment', sql`SELECT id::text, status FROM payments WHERE status IN ('pending', 'requires_action', 'requires_capture')`)),
    ...(await q('refund', sql`SELECT id::text, status FROM refunds WHERE status = 'pending'`)),
    ...(await q('payout', sql`SELECT id::text, status FROM payouts WHERE status IN ('pending', 'processing')`)),
    ...(await q('mandate', sql`SELECT id::text, status || ' at ' || coalesce(connector, 'no connector') || ', next check ' || coalesce(next_status_check_at::text, 'none') || ', now ' || now()::text AS status FROM mandates WHERE status = 'pending'`)),
    ...(await q('order', sql`SELECT o.id::text, o.status FROM payment_orders o WHERE o.status = 'processing' OR (o.status = 'open' AND o.expires_at < now())`)),
  ];
};

export const EVERY_STEP: Record<string, Invariant> = {
  journalBalancesAndMatchesBalances,
  noOrderPaidTwice,
  noPaymentSucceededWithoutCharge,
  noCapturedChargeOfAFailedPayment,
  noChargeSentAgainOnceHeld,
  refundsNeverExceedPayment,
  refundsNeverExceedPaymentAtAnyMoment,
  capturedNeverAboveAuthorised,
  bookedIsCapturedLessRefunded,
  noCaptureAfterVoid,
  payoutsNeverOverdraw,
  noUnsealingWithoutAMovement,
  legalTransitionsAndIncreasingVersions,
  acknowledgedWritesKept,
  replaysAnswerTheSameBytes,
  ...ATTEMPT_INVARIANTS,
  ...MONEY_INVARIANTS,
};

export const AT_THE_END: Record<string, Invariant> = { ...EVERY_STEP, disputesEndAsTheProcessorDecided, everyEventDeliveredOrAbandoned, everySubscribedEndpointServed, nothingPendingForever };
