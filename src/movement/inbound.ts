// Inbound processor webhooks (POST /v1/connectors/{name}/webhooks): verified with the connector's
// secret, deduplicated by the processor's event id (connector_webhook_events, in the same
// transaction as the change it causes), then applied like any other report — our own events
// follow from the change. One path for every kind of movement.
import { eq } from 'drizzle-orm';
import { WebhookVerificationError, type InboundEvent } from '../connectors/types.js';
import { systemContext } from '../domain/events/service.js';
import { ApiError } from '../kernel/errors.js';
import { parseId } from '../kernel/ids.js';
import type { Runtime } from '../runtime.js';
import type { Db } from '../storage/db.js';
import { connectorWebhookEvents } from '../storage/schema.js';
import { applyState } from './apply.js';
import type { AnyKind } from './kind.js';

export interface InboundResult {
  received: true;
  /** The processor already sent this event; nothing was done again. */
  duplicate: boolean;
  /** False when the event names nothing of ours (acknowledged so that the processor stops sending it). */
  applied: boolean;
}

/** The kind that applies each object a processor may report on. */
export type KindsByObject = Record<InboundEvent['object'], AnyKind>;

function verify(rt: Runtime, name: string, headers: Record<string, string | string[] | undefined>, rawBody: string): InboundEvent {
  const connector = rt.connectors.registry.get(name);
  if (!connector) throw new ApiError('resource_missing', { param: 'name', message: `No such connector: '${name}'.` });
  try {
    return connector.parseWebhook({ headers, rawBody, now: rt.now() });
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

export async function receiveConnectorWebhook(
  db: Db,
  rt: Runtime,
  kinds: KindsByObject,
  name: string,
  headers: Record<string, string | string[] | undefined>,
  rawBody: string,
): Promise<InboundResult> {
  const event = verify(rt, name, headers, rawBody);
  const kind = kinds[event.object];
  const { table } = kind;
  const uuid = parseId(kind.prefix, event.reference);
  // Processors know our object by its id alone; ids are unique across accounts.
  const [owner] = uuid
    ? await db.select({ accountId: table.accountId, livemode: table.livemode, connector: table.connector }).from(table).where(eq(table.id, uuid))
    : [];
  const modes = rt.connectors.registry.get(name)!.modes;
  if (!uuid || !owner || !modes.includes(owner.livemode ? 'live' : 'test')) return { received: true, duplicate: false, applied: false };
  const { accountId, livemode } = owner as { accountId: string; livemode: boolean; connector: string | null };

  return db.transaction(async (tx) => {
    const fresh = await tx
      .insert(connectorWebhookEvents)
      .values({ accountId, connector: name, eventId: event.eventId, livemode, objectId: event.reference, receivedAt: rt.now() })
      .onConflictDoNothing()
      .returning({ eventId: connectorWebhookEvents.eventId });
    if (fresh.length === 0) return { received: true, duplicate: true, applied: false };
    // An object held by another connector is not this processor's to settle.
    if (owner.connector !== null && owner.connector !== name) return { received: true, duplicate: false, applied: false };
    const after = await applyState(db, rt, kind, systemContext(accountId, livemode), uuid, name, event.state, { tx });
    return { received: true, duplicate: false, applied: after !== undefined };
  });
}
