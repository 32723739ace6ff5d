// Inbound processor webhooks (POST /v1/connectors/{name}/webhooks): verified with the connector's
// secret, deduplicated by the processor's event id (connector_webhook_events, in the same
// transaction as the change it causes), then applied like any other report about a payment or
// refund — our own events follow from the change.
import { eq } from 'drizzle-orm';
import type { Db } from '../../storage/db.js';
import { connectorWebhookEvents, payments, refunds } from '../../storage/schema.js';
import { parseId } from '../../kernel/ids.js';
import { ApiError } from '../../kernel/errors.js';
import { systemContext } from '../events/service.js';
import { WebhookVerificationError, type InboundEvent } from '../../connectors/types.js';
import type { Runtime } from '../../runtime.js';
import { applyChargeState } from './service.js';
import { applyRefundState, updateFromRefundState } from '../refunds/service.js';
import { receivePayoutEvent } from '../payouts/inbound.js';
import { receiveMandateEvent } from '../mandates/inbound.js';

export interface InboundResult {
  received: true;
  /** The processor already sent this event; nothing was done again. */
  duplicate: boolean;
  /** False when the event names nothing of ours (acknowledged so that the processor stops sending it). */
  applied: boolean;
}

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
  name: string,
  headers: Record<string, string | string[] | undefined>,
  rawBody: string,
): Promise<InboundResult> {
  const event = verify(rt, name, headers, rawBody);
  if (event.object === 'payout') return receivePayoutEvent(db, rt, name, event);
  if (event.object === 'mandate') return receiveMandateEvent(db, rt, name, event);
  const prefix = event.object === 'payment' ? 'pay' : 'ref';
  const uuid = parseId(prefix, event.reference);
  const table = event.object === 'payment' ? payments : refunds;
  // Processors know our object by its id alone; ids are unique across accounts.
  const [owner] = uuid
    ? await db.select({ accountId: table.accountId, livemode: table.livemode, connector: table.connector }).from(table).where(eq(table.id, uuid))
    : [];
  const modes = rt.connectors.registry.get(name)!.modes;
  if (!uuid || !owner || !modes.includes(owner.livemode ? 'live' : 'test')) return { received: true, duplicate: false, applied: false };

  return db.transaction(async (tx) => {
    const fresh = await tx
      .insert(connectorWebhookEvents)
      .values({ accountId: owner.accountId, connector: name, eventId: event.eventId, livemode: owner.livemode, objectId: event.reference, receivedAt: rt.now() })
      .onConflictDoNothing()
      .returning({ eventId: connectorWebhookEvents.eventId });
    if (fresh.length === 0) return { received: true, duplicate: true, applied: false };
    const ctx = systemContext(owner.accountId, owner.livemode);
    // An object held by another connector is not this processor's to settle.
    if (owner.connector !== null && owner.connector !== name) return { received: true, duplicate: false, applied: false };
    if (event.object === 'payment') await applyChargeState(db, rt, ctx, owner.accountId, uuid, name, event.state, tx);
    else await applyRefundState(db, rt, ctx, owner.accountId, uuid, updateFromRefundState(event.state), tx);
    return { received: true, duplicate: false, applied: true };
  });
}
