// The ledger's invariants, recomputed from the journal: every entry balances, every stored
// balance equals the sum of its lines, and every payment, refund and payout has exactly the
// entries its state calls for (a succeeded payment is credited once, a reversed one credited and
// reversed once each; a refund reserves once and
// settles or returns once; a payout reserves once, then leaves, is released, or leaves and comes
// back; a dispute's funds are withdrawn once more than reinstated while they are out), and that pending money matches its open settlements, each moved to available at most
// once (check-settlement.ts). Used by `npm run cli -- ledger check` and by the tests.
import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../storage/db.js';
import { toPublicId } from '../kernel/ids.js';
import { SOURCE_PREFIXES } from './balance.js';
import { checkSettlements, type SettlementMismatch } from './check-settlement.js';

export interface LedgerCheckReport {
  ok: boolean;
  entries: number;
  balances: number;
  unbalancedEntries: { account_id: string; entry_id: string; sum: number; lines: number }[];
  balanceDifferences: {
    account_id: string;
    livemode: boolean;
    ledger_account: string;
    currency: string;
    from_journal: number;
    stored: number;
  }[];
  /** Payments and refunds whose journal entries do not match their status. */
  postingMismatches: { account_id: string; object: string; status: string; expected: string; found: string }[];
  /** Pending balances that differ from their open settlements; payments whose money moved to available other than once. */
  settlementMismatches: SettlementMismatch[];
}


export async function checkLedger(db: Db, opts: { accountId?: string } = {}): Promise<LedgerCheckReport> {
  const scope = (column: string) => (opts.accountId ? sql`${sql.raw(column)} = ${opts.accountId}` : sql`true`);

  const unbalanced = rowsOf(
    await db.execute(sql`
      SELECT e.account_id::text, e.id::text AS entry_id, coalesce(sum(l.amount), 0)::bigint AS sum, count(l.line_no)::int AS lines
      FROM journal_entries e
      LEFT JOIN journal_lines l ON l.account_id = e.account_id AND l.entry_id = e.id
      WHERE ${scope('e.account_id')}
      GROUP BY e.account_id, e.id
      HAVING coalesce(sum(l.amount), 0) <> 0 OR count(l.line_no) < 2`),
  );
  const orphanLines = rowsOf(
    await db.execute(sql`
      SELECT l.account_id::text, l.entry_id::text, sum(l.amount)::bigint AS sum, count(*)::int AS lines
      FROM journal_lines l
      LEFT JOIN journal_entries e ON e.account_id = l.account_id AND e.id = l.entry_id
      WHERE e.id IS NULL AND ${scope('l.account_id')}
      GROUP BY l.account_id, l.entry_id`),
  );

  const differences = rowsOf(
    await db.execute(sql`
      WITH journal AS (
        SELECT e.account_id, e.livemode, l.ledger_account, e.currency, sum(l.amount) AS total
        FROM journal_lines l JOIN journal_entries e ON e.account_id = l.account_id AND e.id = l.entry_id
        WHERE ${scope('e.account_id')}
        GROUP BY 1, 2, 3, 4
      ), stored AS (
        SELECT account_id, livemode, ledger_account, currency, sum(balance) AS total
        FROM ledger_balances
        WHERE ${scope('account_id')}
        GROUP BY 1, 2, 3, 4
      )
      SELECT coalesce(j.account_id, s.account_id)::text AS account_id, coalesce(j.livemode, s.livemode) AS livemode,
             coalesce(j.ledger_account, s.ledger_account) AS ledger_account, coalesce(j.currency, s.currency) AS currency,
             coalesce(j.total, 0)::bigint AS from_journal, coalesce(s.total, 0)::bigint AS stored
      FROM journal j FULL JOIN stored s
        ON j.account_id = s.account_id AND j.livemode = s.livemode AND j.ledger_account = s.ledger_account AND j.currency = s.currency
      WHERE coalesce(j.total, 0) <> coalesce(s.total, 0)`),
  );

  // Entries each object's status calls for, by entry type: `payment` for a succeeded payment,
  // `refund,refund_settlement` for a succeeded refund, and so on.
  const mismatches = rowsOf(
    await db.execute(sql`
      WITH expected AS (
        SELECT p.account_id, 'payment' AS source_type, p.id, p.status,
               -- A manual payment is booked once per succeeded capture, whatever its status (a
               -- partly captured authorisation is still requires_capture; src/domain/captures/transitions.ts).
               CASE WHEN p.capture_method = 'manual'
                      THEN array_to_string(array_fill('payment'::text, ARRAY[(SELECT count(*)::int FROM captures c
                             WHERE c.account_id = p.account_id AND c.payment_id = p.id AND c.status = 'succeeded')]), ',')
                    WHEN p.status = 'succeeded' THEN 'payment'
                    -- A failed direct debit was either never booked, or booked then reversed once (late failure, charge-back).
                    WHEN p.status = 'failed' AND EXISTS (SELECT 1 FROM journal_entries r WHERE r.account_id = p.account_id AND r.source_id = p.id AND r.type = 'payment_reversal')
                      THEN 'payment,payment_reversal'
                    ELSE '' END AS expected
        FROM payments p WHERE ${scope('p.account_id')}
        UNION ALL
        SELECT account_id, 'refund', id, status,
               CASE status WHEN 'pending' THEN 'refund' WHEN 'succeeded' THEN 'refund,refund_settlement' ELSE 'refund,refund_failure' END
        FROM refunds WHERE ${scope('account_id')}
        UNION ALL
        SELECT account_id, 'payout', id, status,
               CASE status WHEN 'paid' THEN 'payout,payout_paid' WHEN 'returned' THEN 'payout,payout_paid,payout_return'
                           WHEN 'failed' THEN 'payout,payout_release' WHEN 'cancelled' THEN 'payout,payout_release' ELSE 'payout' END
        FROM payouts WHERE ${scope('account_id')}
        UNION ALL
        -- A dispute's funds left once more than they came back while they are out (funds_booked):
        -- each reinstatement follows a withdrawal (Adyen's second chargeback takes them again).
        SELECT d.account_id, 'dispute', d.id, d.status,
               array_to_string(array_fill('dispute_reinstatement'::text, ARRAY[r.n])
                 || array_fill('dispute_withdrawal'::text, ARRAY[r.n + CASE WHEN d.funds_booked THEN 1 ELSE 0 END]), ',')
        FROM disputes d
        CROSS JOIN LATERAL (SELECT count(*)::int AS n FROM journal_entries j WHERE j.account_id = d.account_id AND j.source_id = d.id AND j.type = 'dispute_reinstatement') r
        WHERE ${scope('d.account_id')}
      ), found AS (
        SELECT account_id, source_type, source_id, string_agg(type, ',' ORDER BY type) AS found
        -- Settlements are checked on their own (check-settlement.ts); processor fees are the reconciliation's (one per processor record, processor_fees' key), not the object's.
        FROM journal_entries WHERE source_id IS NOT NULL AND type NOT IN ('settlement', 'processor_fee') AND ${scope('account_id')}
        GROUP BY account_id, source_type, source_id
      )
      SELECT coalesce(x.account_id, f.account_id)::text AS account_id, coalesce(x.source_type, f.source_type) AS source_type,
             coalesce(x.id, f.source_id)::text AS id, coalesce(x.status, 'missing') AS status,
             coalesce(x.expected, '') AS expected, coalesce(f.found, '') AS found
      FROM expected x
      FULL JOIN found f ON f.account_id = x.account_id AND f.source_type = x.source_type AND f.source_id = x.id
      WHERE coalesce(x.expected, '') <> coalesce(f.found, '')`),
  );

  const [counts] = rowsOf(
    await db.execute(sql`
      SELECT (SELECT count(*) FROM journal_entries WHERE ${scope('account_id')})::int AS entries,
             (SELECT count(*) FROM (SELECT DISTINCT account_id, livemode, ledger_account, currency FROM ledger_balances WHERE ${scope('account_id')}) b)::int AS balances`),
  );

  const report: LedgerCheckReport = {
    ok: false,
    entries: Number(counts?.entries ?? 0),
    balances: Number(counts?.balances ?? 0),
    unbalancedEntries: [...unbalanced, ...orphanLines].map((r) => ({
      account_id: String(r.account_id),
      entry_id: String(r.entry_id),
      sum: Number(r.sum),
      lines: Number(r.lines),
    })),
    balanceDifferences: differences.map((r) => ({
      account_id: String(r.account_id),
      livemode: Boolean(r.livemode),
      ledger_account: String(r.ledger_account),
      currency: String(r.currency),
      from_journal: Number(r.from_journal),
      stored: Number(r.stored),
    })),
    postingMismatches: mismatches.map((r) => ({
      account_id: String(r.account_id),
      object: toPublicId(SOURCE_PREFIXES[r.source_type as keyof typeof SOURCE_PREFIXES], String(r.id)),
      status: String(r.status),
      expected: String(r.expected),
      found: String(r.found),
    })),
    settlementMismatches: await checkSettlements(db, scope),
  };
  report.ok =
    report.unbalancedEntries.length === 0 &&
    report.balanceDifferences.length === 0 &&
    report.postingMismatches.length === 0 &&
    report.settlementMismatches.length === 0;
  return report;
}
