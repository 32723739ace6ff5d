// Delivery history does not grow without bound: attempt records older than the retention go with
// their day's partition (src/storage/partitions.ts), dropped whole; finished deliveries are
// deleted a batch per pass, so no single statement holds many locks or runs long (they stay one
// unpartitioned table: their fan-out key is what stops an event being delivered twice to an
// endpoint, and it must stay one global key). Pending deliveries are never touched, whatever their
// age, and events stay (they are the account's log and outbox); an endpoint's failing streak lives
// on the endpoint row, so forgetting old attempts cannot disable or re-enable anything.
import { sql } from 'drizzle-orm';
import type { Db } from '../../../storage/db.js';
import { deleteBatch } from '../../../storage/trim.js';
import { dropPartitionsBefore } from '../../../storage/partitions.js';


export async function sweepWebhookHistory(
  db: Db,
  now: Date,
  retentionDays: number,
  batch = 1000,
): Promise<{ attempts: number; deliveries: number }> {
  const cutoff = new Date(now.getTime() - retentionDays * 86_400_000).toISOString();
  const attempts = await dropPartitionsBefore(db, 'webhook_attempts', new Date(cutoff), batch);
  const deliveries = await deleteBatch(db, sql`webhook_deliveries`, ['account_id', 'id'], sql`status <> 'pending' AND updated_at < ${cutoff}::timestamptz`, batch);
  return { attempts, deliveries };
}
