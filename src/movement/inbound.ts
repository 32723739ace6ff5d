// Inbound processor webhooks, verified with the sender's secret, deduplicated by the processor's
// event id (connector_webhook_events, in the same transaction as the change it causes), then
// applied like any other report — our own events follow from the change. One path for every kind
// of movement and two senders:
//
//   POST /v1/connectors/{name}/webhooks            a built-in simulated processor, which reports on
//                                                  movements routed to it by name or through a
//                                                  connector account of it;
//   POST /v1/connector-accounts/{id}/webhooks      a processor reporting for one connector account,
//                                                  verified with that account's own secret: it may
//                                                  only settle that account's movements, of that
//                                                  account and mode (its owner chose the secret).
import { and, eq, sql, type SQL } from 'drizzle-orm';
import { isAccountKey, type Owner } from '../connectors/router.js';
import { WebhookVerificationError, type Connector, type InboundEvent } from '../connectors/types.js';
import { systemContext } from '../events/service.js';
import { ApiError } from '../kernel/errors.js';
import { parseId, toPublicId } from '../kernel/ids.js';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { Runtime } from '../runtime.js';
import type { Db, Tx } from '../storage/db.js';
import { deleteBatch } from '../storage/trim.js';
import { connectorWebhookEvents } from '../storage/schema.js';
import { applyState } from './apply.js';
import { publicIdOfReference, referenceOf, type AnyKind } from './kind.js';
import type { MovementRow } from './row.js';

export interface InboundResult {
  received: true;
  /** The processor already sent this event; nothing was done again. */
  duplicate: boolean;
  /** False when the event names nothing of ours (acknowledged so that the processor stops sending it). */
  applied: boolean;
}

type DisputeEvent = Extract<InboundEvent, { object: 'dispute' }>;

/**
 * Applies a dispute report to the payment it names (src/domain/disputes), in the webhook's
 * transaction; `key` is the payment's route key this sender reports under.
 */
export type DisputeApplier = (tx: Tx, rt: Runtime, payment: MovementRow, key: string, report: DisputeEvent['state']) => Promise<void>;

/** The kind that applies each object a processor may report on, and what applies its disputes. */
export type KindsByObject = Record<Exclude<InboundEvent['object'], 'dispute'>, AnyKind> & { dispute: DisputeApplier; unmatchedDispute: UnmatchedRecorder };

/** Keeps a dispute report naming no payment this sender may settle, for the operator; true when it was new. */
export type UnmatchedRecorder = (db: Db, sender: InboundSender, event: DisputeEvent, now: Date) => Promise<boolean>;

/** Who sent a webhook, as the receiving path knows it. */
export interface InboundSender {
  /** Verifies and reads the webhook. */
  connector: Connector;
  /** How the deduplication table names the sender. */
  name: string;
  /** The connector account's owner, when the sender is one (a built-in connector reports for anyone). */
  owner?: Owner;
  /** Whether the sender may report on `row` at all (its mode; for an account, its tenancy): otherwise nothing is recorded. */
  accepts(row: MovementRow): boolean;
  /** The route key under which this sender may settle `row`; undefined when another connector holds it. */
  keyFor(row: MovementRow, route: readonly string[]): Promise<string | undefined>;
}

function verify(connector: Connector, rt: Runtime, headers: Record<string, string | string[] | undefined>, rawBody: string): InboundEvent[] {
  try {
    return [connector.parseWebhook({ headers, rawBody, now: rt.now() })].flat();
  } catch (err) {
    if (!(err instanceof WebhookVerificationError)) throw err;
    switch (err.reason) {
      case 'signature_invalid':
        throw new ApiError('connector_webhook_signature_invalid', { message: err.message });
      case 'timestamp_stale':
        throw new ApiError('connector_webhook_timestamp_stale', { message: err.message });
      case 'payload_invalid':
        throw new ApiError('parameter_invalid', { message: err.message });
      default:
        return err.reason satisfies never;
    }
  }
}

/** A built-in connector, by the name in its webhook path. */
export function builtInSender(rt: Runtime, name: string): InboundSender {
  const connector = rt.connectors.registry.get(name);
  if (!connector) throw new ApiError('resource_missing', { param: 'name', message: `No such connector: '${name}'.` });
  // A route key stands for this processor: its name, or a connector account of it.
  const isThis = async (key: string, owner: Owner) => key === name || (isAccountKey(key) && (await rt.connectors.resolveAccount(key, owner))?.name === name);
  return {
    connector,
    name,
    accepts: (row) => connector.modes.includes(row.livemode ? 'live' : 'test'),
    async keyFor(row, route) {
      if (row.connector !== null) return (await isThis(row.connector, row)) ? row.connector : undefined;
      for (const key of route) if (await isThis(key, row)) return key;
      return undefined;
    },
  };
}

/** A connector account's own processor: only its own movements, in its own account and mode. */
export function accountSender(connector: Connector, key: string, owner: Owner): InboundSender {
  return {
    connector,
    name: key,
    owner,
    accepts: (row) => row.accountId === owner.accountId && row.livemode === owner.livemode,
    async keyFor(row, route) {
      return (row.connector ?? (route.includes(key) ? key : null)) === key ? key : undefined;
    },
  };
}

export async function receiveConnectorWebhook(
  db: Db,
  rt: Runtime,
  kinds: KindsByObject,
  sender: InboundSender,
  headers: Record<string, string | string[] | undefined>,
  rawBody: string,
): Promise<InboundResult> {
  const events = verify(sender.connector, rt, headers, rawBody);
  // A batch (GoCardless sends several events per request) is applied event by event, each in its
  // own transaction with its own deduplication: a retried batch re-applies only what had not committed.
  const results: InboundResult[] = [];
  for (const event of events) results.push(await receiveEvent(db, rt, kinds, sender, event));
  return {
    received: true,
    duplicate: results.length > 0 && results.every((r) => r.duplicate),
    applied: results.some((r) => r.applied),
  };
}

async function receiveEvent(db: Db, rt: Runtime, kinds: KindsByObject, sender: InboundSender, event: InboundEvent): Promise<InboundResult> {
  if (event.object === 'dispute') return receiveDispute(db, rt, kinds, sender, event);
  const kind = kinds[event.object];
  // A movement with attempts (a cascaded payment) hears only about its current one: an earlier
  // attempt's late report (its decline) must not settle the attempt in flight.
  const uuid = parseId(kind.prefix, kind.cascade ? publicIdOfReference(event.reference) : event.reference);
  const owner = uuid ? await ownerOf(db, kind, byId(kind, uuid, sender)) : undefined;
  const unless = kind.cascade ? (row: MovementRow) => referenceOf(kind, row) !== event.reference : undefined;
  return applyOnce(db, rt, sender, kind, event, owner, (tx, key) =>
    applyState(db, rt, kind, systemContext(owner!.accountId, owner!.livemode), owner!.id, key, event.state, { tx, unless }).then((after) => after !== undefined),
  );
}

/**
 * Our object by the id a processor reports: within the connector account's owner when the sender
 * is one (one account's rows: one shard of a distributed table); a built-in processor reports for
 * anyone, so its objects are found by the id alone (payments_id_idx and its like; ids are random UUIDs).
 */
function byId(kind: AnyKind, uuid: string, sender: InboundSender): SQL {
  const { table } = kind.rules;
  const id = eq(table.id, uuid);
  return sender.owner ? and(eq(table.accountId, sender.owner.accountId), eq(table.livemode, sender.owner.livemode), id)! : id;
}

/** The one row of `kind` matching `where`. */
async function ownerOf(db: Db, kind: AnyKind, where: SQL): Promise<MovementRow | undefined> {
  const [owner] = (await db.select().from(kind.rules.table).where(where).limit(2)) as unknown as MovementRow[];
  return owner;
}

/**
 * A dispute names its payment by our id when the processor echoes it (Adyen, the simulators), else
 * by the processor's own reference of the payment (Stripe's PaymentIntent). A processor's reference
 * is unique only at that processor account, so it is looked up in the account and mode of the
 * connector account the webhook came to; a built-in processor, reporting for anyone, names our id.
 */
async function receiveDispute(db: Db, rt: Runtime, kinds: KindsByObject, sender: InboundSender, event: DisputeEvent): Promise<InboundResult> {
  const kind = kinds.payment;
  const table = kind.rules.table as typeof kind.rules.table & { connectorReference: PgColumn };
  const uuid = parseId(kind.prefix, event.reference);
  const { paymentConnectorReference } = event.state;
  const byReference = (reference: string, owner: Owner) =>
    and(eq(table.accountId, owner.accountId), eq(table.livemode, owner.livemode), eq(table.connectorReference, reference));
  const where = uuid ? byId(kind, uuid, sender) : paymentConnectorReference && sender.owner ? byReference(paymentConnectorReference, sender.owner) : undefined;
  const owner = where ? await ownerOf(db, kind, where) : undefined;
  // Not dropped: acknowledged (the processor stops sending it) and kept for the operator.
  if (!owner || !sender.accepts(owner)) return { received: true, duplicate: !(await kinds.unmatchedDispute(db, sender, event, rt.now())), applied: false };
  return applyOnce(db, rt, sender, kind, event, owner, async (tx, key) => {
    await kinds.dispute(tx, rt, owner!, key, event.state);
    return true;
  });
}

/**
 * Records the processor's event id and applies it, in one transaction: an event seen before, or
 * naming nothing this sender may settle, changes nothing.
 */
async function applyOnce(
  db: Db,
  rt: Runtime,
  sender: InboundSender,
  kind: AnyKind,
  event: InboundEvent,
  owner: MovementRow | undefined,
  apply: (tx: Tx, key: string) => Promise<boolean>,
): Promise<InboundResult> {
  if (!owner || !sender.accepts(owner)) return { received: true, duplicate: false, applied: false };
  const key = await sender.keyFor(owner, kind.route(owner));
  const { accountId, livemode } = owner;

  return db.transaction(async (tx) => {
    const fresh = await tx
      .insert(connectorWebhookEvents)
      .values({ accountId, connector: sender.name, eventId: event.eventId, livemode, objectId: event.reference || toPublicId(kind.prefix, owner.id), receivedAt: rt.now() })
      .onConflictDoNothing()
      .returning({ eventId: connectorWebhookEvents.eventId });
    if (fresh.length === 0) return { received: true, duplicate: true, applied: false };
    // An object held by another connector is not this processor's to settle.
    if (key === undefined) return { received: true, duplicate: false, applied: false };
    return { received: true, duplicate: false, applied: await apply(tx, key) };
  });
}

/**
 * Forgets applied processor events older than `retentionDays`, a batch per worker pass (one global
 * key, so no partition to drop: docs/operations.md#partitioned-history). The window must outlast
 * the longest a processor retries a webhook: an event redelivered after its id is forgotten is taken
 * as new, and only the state tables then stand between it and a second application.
 */
export async function sweepAppliedEvents(db: Db, now: Date, retentionDays: number, batch = 1000): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionDays * 86_400_000).toISOString();
  return deleteBatch(db, sql`connector_webhook_events`, ['account_id', 'connector', 'event_id'], sql`received_at < ${cutoff}::timestamptz`, batch);
}
