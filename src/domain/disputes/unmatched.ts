// Dispute reports naming a payment the service does not know (a payment made outside the service on
// the same processor account, a wrong account's webhook URL, a report racing the payment's own
// record): acknowledged to the processor so that it stops sending them, applied to nothing, and
// kept for the operator — `npm run cli -- disputes unmatched` lists them, newest first — since a
// chargeback nobody sees is lost by default. One row per sender and processor event id.
import { desc, eq, isNull, or } from 'drizzle-orm';
import type { Db } from '../../storage/db.js';
import { unmatchedDisputeReports } from '../../storage/schema.js';
import type { DisputeReport } from '../../connectors/disputes.js';
import { parseId } from '../../kernel/ids.js';

export interface UnmatchedSender {
  name: string;
  /** The connector account's owner when the sender is one. */
  owner?: { accountId: string; livemode: boolean };
}

/** Records the report once; true when it was new. */
export async function recordUnmatchedDispute(db: Db, sender: UnmatchedSender, event: { eventId: string; reference: string; state: DisputeReport }, now: Date): Promise<boolean> {
  const rows = await db
    .insert(unmatchedDisputeReports)
    .values({
      connector: sender.name,
      eventId: event.eventId,
      accountId: sender.owner?.accountId ?? null,
      livemode: sender.owner?.livemode ?? null,
      disputeReference: event.state.connectorReference,
      paymentReference: event.reference || event.state.paymentConnectorReference,
      amount: event.state.amount,
      currency: event.state.currency,
      status: event.state.status,
      receivedAt: now,
    })
    .onConflictDoNothing()
    .returning({ eventId: unmatchedDisputeReports.eventId });
  return rows.length > 0;
}

/** The operator's list: every sender's, or one account's (its connector accounts' reports and the built-in connectors'). */
export async function listUnmatchedDisputes(db: Db, opts: { account?: string; limit: number }) {
  const accountUuid = opts.account === undefined ? undefined : parseId('acct', opts.account);
  const rows = await db
    .select()
    .from(unmatchedDisputeReports)
    .where(accountUuid ? or(eq(unmatchedDisputeReports.accountId, accountUuid), isNull(unmatchedDisputeReports.accountId)) : undefined)
    .orderBy(desc(unmatchedDisputeReports.receivedAt))
    .limit(opts.limit);
  return rows.map((r) => ({
    connector: r.connector,
    event_id: r.eventId,
    livemode: r.livemode,
    dispute_reference: r.disputeReference,
    payment_reference: r.paymentReference,
    amount: r.amount,
    currency: r.currency,
    status: r.status,
    received_at: r.receivedAt.toISOString(),
  }));
}

