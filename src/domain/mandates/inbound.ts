// Inbound processor webhooks about mandates (the simulated bank accepting, refusing or revoking
// one), received through POST /v1/connectors/{name}/webhooks like payment and refund events:
// deduplicated by the processor's event id in the same transaction as the change they cause.
import { eq } from 'drizzle-orm';
import type { Db } from '../../storage/db.js';
import { connectorWebhookEvents, mandates } from '../../storage/schema.js';
import { parseId } from '../../kernel/ids.js';
import { systemContext } from '../events/service.js';
import type { InboundEvent } from '../../connectors/types.js';
import type { Runtime } from '../../runtime.js';
import { applyMandateState } from './service.js';

export async function receiveMandateEvent(
  db: Db,
  rt: Runtime,
  name: string,
  event: Extract<InboundEvent, { object: 'mandate' }>,
): Promise<{ received: true; duplicate: boolean; applied: boolean }> {
  const uuid = parseId('mdt', event.reference);
  // Processors know our mandate by its id alone; ids are unique across accounts.
  const [owner] = uuid
    ? await db.select({ accountId: mandates.accountId, livemode: mandates.livemode, connector: mandates.connector }).from(mandates).where(eq(mandates.id, uuid))
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
    if (owner.connector !== null && owner.connector !== name) return { received: true, duplicate: false, applied: false };
    await applyMandateState(db, rt, systemContext(owner.accountId, owner.livemode), owner.accountId, uuid, name, event.state, tx);
    return { received: true, duplicate: false, applied: true };
  });
}
