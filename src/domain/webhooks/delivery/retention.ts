// Delivery history does not grow without bound: attempt records and finished deliveries older than
// the retention are deleted by the worker, a batch per pass, so no single statement holds many
// locks or runs long. Pending deliveries are never touched, whatever their age, and events stay
// (they are the account's log and outbox); an endpoint's failing streak lives on the endpoint
// row, so forgetting old attempts cannot disable or re-enable anything.
import { sql } from 'drizzle-orm';
import type { Db } from '../../../storage/db.js';

type Row = Record<string, unknown>;
const rowsOf = (result: unknown): Row[] => (result as { rows: Row[] }).rows;

export async function sweepWebhookHistory(
  db: Db,
  now: Date,
  retentionDays: number,
  batch = 1000,
): Promise<{ attempts: number; deliveries: number }> {
  const cutoff = new Date(now.getTime() - retentionDays * 86_400_000).toISOString();
  const attempts = rowsOf(
    await db.execute(sql`
      DELETE FROM webhook_attempts
      WHERE (account_id, id) IN (
        SELECT account_id, id FROM webhook_attempts WHERE created_at < ${cutoff}::timestamptz LIMIT ${batch})
      RETURNING 1 AS ok`),
  ).length;
  const deliveries = rowsOf(
    await db.execute(sql`
      DELETE FROM webhook_deliveries
      WHERE (account_id, id) IN (
        SELECT account_id, id FROM webhook_deliveries
        WHERE status <> 'pending' AND updated_at < ${cutoff}::timestamptz LIMIT ${batch})
      RETURNING 1 AS ok`),
  ).length;
  return { attempts, deliveries };
}
