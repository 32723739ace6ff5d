// The worker's daily reconciliation (RECONCILIATION_DAILY=true, off by default): each enabled
// connector account whose records can be fetched (Stripe, the simulators) is reconciled for the
// previous UTC day, once. A run already made for that day (by a worker, or by hand with exactly
// that period) is not made again; two workers meeting on one account the same moment may both run
// it, which books nothing twice (processor fees are keyed by the processor's record).
import { and, eq, inArray, isNull } from 'drizzle-orm';
import type { Db } from '../../storage/db.js';
import { connectorAccounts, reconciliationRuns } from '../../storage/schema.js';
import { toPublicId } from '../../kernel/ids.js';
import { systemContext } from '../../events/service.js';
import { ApiError } from '../../kernel/errors.js';
import type { Runtime } from '../../runtime.js';
import { FETCHABLE, runReconciliation } from './service.js';

const DAY_MS = 86_400_000;

/** Runs yesterday's reconciliation of every account due; answers how many ran and how many the processor refused. */
export async function runDailyReconciliations(db: Db, rt: Runtime, now: Date): Promise<{ runs: number; failed: number }> {
  const to = new Date(Math.floor(+now / DAY_MS) * DAY_MS);
  const from = new Date(+to - DAY_MS);
  const accounts = await db
    .select({ accountId: connectorAccounts.accountId, id: connectorAccounts.id, livemode: connectorAccounts.livemode })
    .from(connectorAccounts)
    .where(and(inArray(connectorAccounts.connector, FETCHABLE), eq(connectorAccounts.status, 'enabled'), isNull(connectorAccounts.deletedAt)));
  let runs = 0;
  let failed = 0;
  for (const account of accounts) {
    const [done] = await db
      .select({ id: reconciliationRuns.id })
      .from(reconciliationRuns)
      .where(and(eq(reconciliationRuns.accountId, account.accountId), eq(reconciliationRuns.livemode, account.livemode), eq(reconciliationRuns.connectorAccountId, account.id), eq(reconciliationRuns.periodStart, from), eq(reconciliationRuns.periodEnd, to)))
      .limit(1);
    if (done) continue;
    try {
      await runReconciliation(db, rt, systemContext(account.accountId, account.livemode), { connector_account: toPublicId('ca', account.id), period_start: from.toISOString(), period_end: to.toISOString() });
      runs += 1;
    } catch (err) {
      // A processor that does not answer today is asked again at the next pass.
      if (!(err instanceof ApiError)) throw err;
      failed += 1;
    }
  }
  return { runs, failed };
}
