// The settlement part of the ledger check (check.ts): the open settlement rows of each account,
// mode and currency add up to its merchant_pending balance, and every payment's pending money
// moved to available at most once — one settlement entry for a closed row that had money left,
// none otherwise.
import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, type Db } from '../storage/db.js';

export interface SettlementMismatch {
  account_id: string;
  livemode: boolean;
  currency: string;
  /** `pending` (balance against open rows) or the payment whose settlement entries are wrong. */
  subject: string;
  expected: number;
  found: number;
}


export async function checkSettlements(db: Db, scope: (column: string) => SQL): Promise<SettlementMismatch[]> {
  const pending = rowsOf(
    await db.execute(sql`
      WITH journal AS (
        SELECT l.account_id, l.livemode, e.currency, -sum(l.amount) AS total
        FROM journal_lines l JOIN journal_entries e ON e.account_id = l.account_id AND e.id = l.entry_id
        WHERE l.ledger_account = 'merchant_pending' AND ${scope('l.account_id')}
        GROUP BY 1, 2, 3
      ), open AS (
        SELECT account_id, livemode, currency, sum(amount) AS total
        FROM ledger_settlements WHERE settled_at IS NULL AND ${scope('account_id')}
        GROUP BY 1, 2, 3
      )
      SELECT coalesce(j.account_id, o.account_id)::text AS account_id, coalesce(j.livemode, o.livemode) AS livemode,
             coalesce(j.currency, o.currency) AS currency, 'pending' AS subject,
             coalesce(o.total, 0)::bigint AS expected, coalesce(j.total, 0)::bigint AS found
      FROM journal j FULL JOIN open o ON j.account_id = o.account_id AND j.livemode = o.livemode AND j.currency = o.currency
      WHERE coalesce(j.total, 0) <> coalesce(o.total, 0)`),
  );
  const moves = rowsOf(
    await db.execute(sql`
      WITH expected AS (
        SELECT account_id, livemode, currency, payment_id, (settled_entry_id IS NOT NULL)::int AS n
        FROM ledger_settlements WHERE ${scope('account_id')}
      ), found AS (
        SELECT account_id, livemode, currency, source_id AS payment_id, count(*)::int AS n
        FROM journal_entries WHERE type = 'settlement' AND ${scope('account_id')}
        GROUP BY 1, 2, 3, 4
      )
      SELECT coalesce(x.account_id, f.account_id)::text AS account_id, coalesce(x.livemode, f.livemode) AS livemode,
             coalesce(x.currency, f.currency) AS currency, coalesce(x.payment_id, f.payment_id)::text AS subject,
             coalesce(x.n, 0) AS expected, coalesce(f.n, 0) AS found
      FROM expected x FULL JOIN found f ON x.account_id = f.account_id AND x.payment_id = f.payment_id
      WHERE coalesce(x.n, 0) <> coalesce(f.n, 0)`),
  );
  return [...pending, ...moves].map((r) => ({
    account_id: String(r.account_id),
    livemode: Boolean(r.livemode),
    currency: String(r.currency),
    subject: String(r.subject),
    expected: Number(r.expected),
    found: Number(r.found),
  }));
}
