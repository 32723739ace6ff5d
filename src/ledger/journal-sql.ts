// The SQL text that writes the journal: an entry, its lines and its balance changes, as
// data-modifying CTEs. journal.ts posts entries with it, and the one-statement payment finish
// (src/domain/payments/one-statement.ts) embeds it after its own updates, so the journal's
// columns, line numbering and balance upsert are written down once.

/** Where journalWrites finds each value: a placeholder (`$3`) or SQL, as the enclosing statement has it. */
export interface JournalWriteParams {
  account: string;
  livemode: string;
  id: string;
  type: string;
  currency: string;
  sourceType: string;
  sourceId: string;
  description: string;
  createdAt: string;
  /** The lines' ledger accounts (text[]) and amounts (bigint[]), in order. */
  lineAccounts: string;
  lineAmounts: string;
  /** balanceChanges' rows: ledger accounts (text[]), slots (int[]), amounts (bigint[]), upserted in that order (it avoids deadlocks). */
  balanceAccounts: string;
  balanceSlots: string;
  balanceAmounts: string;
  /** A CTE the writes depend on: they write once per row it returns (one, or none). */
  after?: string;
}

/**
 * The data-modifying CTEs `entry`, `lines` and `balances` that post one entry, its lines and its
 * balance changes: the one text that writes the journal, in postJournalEntry's statement and in
 * the one-statement payment finish (src/domain/payments/one-statement.ts).
 */
export function journalWrites(p: JournalWriteParams): string {
  const from = p.after ? ` FROM ${p.after}` : '';
  const fromAnd = p.after ? `${p.after}, ` : '';
  return `entry AS (
  INSERT INTO journal_entries (account_id, id, livemode, type, currency, source_type, source_id, description, created_at)
  SELECT ${p.account}, ${p.id}, ${p.livemode}, ${p.type}, ${p.currency}, ${p.sourceType}, ${p.sourceId}, ${p.description}, ${p.createdAt}${from}
), lines AS (
  INSERT INTO journal_lines (account_id, entry_id, line_no, livemode, ledger_account, amount)
  SELECT ${p.account}, ${p.id}, l.line_no, ${p.livemode}, l.ledger_account, l.amount FROM ${fromAnd}unnest(${p.lineAccounts}::text[], ${p.lineAmounts}::bigint[]) WITH ORDINALITY AS l(ledger_account, amount, line_no)
), balances AS (
  INSERT INTO ledger_balances (account_id, livemode, ledger_account, currency, slot, balance)
  SELECT ${p.account}, ${p.livemode}, b.ledger_account, ${p.currency}, b.slot, b.amount FROM ${fromAnd}unnest(${p.balanceAccounts}::text[], ${p.balanceSlots}::int[], ${p.balanceAmounts}::bigint[]) WITH ORDINALITY AS b(ledger_account, slot, amount, n)
  ORDER BY b.n
  ON CONFLICT (account_id, livemode, ledger_account, currency, slot) DO UPDATE SET balance = ledger_balances.balance + excluded.balance
)`;
}
