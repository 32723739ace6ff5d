// The ledger's margin per connector and month: the fees charged to the merchant (fee_revenue, by
// the connector of the payment, refund, dispute or payout behind each entry) less the processor
// fees reconciliation found (processor_fees, src/domain/reconciliation/service.ts). Connectors are
// route keys: a connector account's ca_ id, or a built-in simulator's name.
import { sql } from 'drizzle-orm';
import type { Db } from '../../storage/db.js';
import type { RequestContext } from '../../kernel/context.js';

export interface MarginRow {
  connector: string;
  /** YYYY-MM, UTC. */
  month: string;
  currency: string;
  feesCharged: number;
  processorFees: number;
  margin: number;
}

export async function marginsByConnectorMonth(db: Db, ctx: RequestContext, months = 12): Promise<MarginRow[]> {
  const result = await db.execute(sql`
    WITH charged AS (
      SELECT coalesce(p.connector, r.connector, d.connector, po.connector, '—') AS connector, to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM') AS month,
             e.currency, -sum(l.amount) AS amount
      FROM journal_entries e
      JOIN journal_lines l ON l.account_id = e.account_id AND l.entry_id = e.id AND l.ledger_account = 'fee_revenue'
      LEFT JOIN payments p ON e.source_type = 'payment' AND p.account_id = e.account_id AND p.id = e.source_id
      LEFT JOIN refunds r ON e.source_type = 'refund' AND r.account_id = e.account_id AND r.id = e.source_id
      LEFT JOIN disputes d ON e.source_type = 'dispute' AND d.account_id = e.account_id AND d.id = e.source_id
      LEFT JOIN payouts po ON e.source_type = 'payout' AND po.account_id = e.account_id AND po.id = e.source_id
      WHERE e.account_id = ${ctx.accountId} AND e.livemode = ${ctx.livemode}
      GROUP BY 1, 2, 3
    ), paid AS (
      SELECT connector, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM') AS month, currency, sum(amount) AS amount
      FROM processor_fees WHERE account_id = ${ctx.accountId} AND livemode = ${ctx.livemode}
      GROUP BY 1, 2, 3
    )
    SELECT coalesce(c.connector, f.connector) AS connector, coalesce(c.month, f.month) AS month, coalesce(c.currency, f.currency) AS currency,
           coalesce(c.amount, 0)::bigint AS charged, coalesce(f.amount, 0)::bigint AS paid
    FROM charged c FULL JOIN paid f ON f.connector = c.connector AND f.month = c.month AND f.currency = c.currency
    ORDER BY 2 DESC, 1, 3
    LIMIT ${months * 20}`);
  const rows = (result as unknown as { rows: { connector: string; month: string; currency: string; charged: string | number; paid: string | number }[] }).rows;
  return rows.map((r) => ({ connector: r.connector, month: r.month, currency: r.currency, feesCharged: Number(r.charged), processorFees: Number(r.paid), margin: Number(r.charged) - Number(r.paid) }));
}
