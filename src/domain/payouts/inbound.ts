// A bank's asynchronous report about a payout, arriving through the inbound connector webhook
// (POST /v1/connectors/{name}/webhooks, verified by src/domain/payments/inbound.ts): deduplicated
// by the processor's event id in the same transaction as the change it causes, then applied like
// any other report (outcome.ts), which writes our own events.
import { eq } from 'drizzle-orm';
import type { Db } from '../../storage/db.js';
import { connectorWebhookEvents, payouts } from '../../storage/schema.js';
import { parseId } from '../../kernel/ids.js';
import { systemContext } from '../events/service.js';
import type { PayoutState } from '../../connectors/types.js';
import type { Runtime } from '../../runtime.js';
import { applyPayoutUpdate, lockPayout, updateFromPayoutState } from './outcome.js';

export async function receivePayoutEvent(
  db: Db,
  rt: Runtime,
  name: string,
  event: { eventId: string; reference: string; state: PayoutState },
): Promise<{ received: true; duplicate: boolean; applied: boolean }> {
  const uuid = parseId('po', event.reference);
  // Banks know our payout by its id alone; ids are unique across accounts.
  const [owner] = uuid
    ? await db.select({ accountId: payouts.accountId, livemode: payouts.livemode, connector: payouts.connector }).from(payouts).where(eq(payouts.id, uuid))
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
    const row = await lockPayout(tx, owner.accountId, uuid);
    // A payout held by another connector is not this bank's to settle.
    if (!row || (row.connector !== null && row.connector !== name)) return { received: true, duplicate: false, applied: false };
    const options = { now: rt.now(), statusCheckIntervalMs: rt.config.statusCheckIntervalMs };
    await applyPayoutUpdate(tx, systemContext(owner.accountId, owner.livemode), row, updateFromPayoutState(name, event.state), [], options);
    return { received: true, duplicate: false, applied: true };
  });
}
