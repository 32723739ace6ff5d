// The SQL text that writes the journal: an entry, its lines and its balance changes, as
// data-modifying CTEs. journal.ts posts entries with it, and the one-statement payment finish
// (src/domain/payments/finish-at-once.ts) embeds it after its own updates, so the journal's
// columns, line numbering and balance upsert are written down once.

/**
 * Where journalWrites finds each value: SQL over `from` (a relation holding one row per entry to
 * post) or, without it, over the statement's parameters (one entry).
 */
export interface JournalWriteParams {
  /** The relation and its alias (`done i`): one entry per row, none when it is empty. */
  from?: string;
  account: string;
  livemode: string;
  id: string;
  type: string;
  currency: string;
  sourceType: string;
  sourceId: string;
  description: string;
  createdAt: string;
  /** The lines, in order: a jsonb array of `{ledger_account, amount}` (journalJson.lines). */
  lines: string;
  /** balanceChanges' rows: a jsonb array of `{ledger_account, slot, amount}` (journalJson.balances). */
  balances: string;
}

/** The jsonb arrays journalWrites takes, from the lines and balanceChanges' rows. */
export const journalJson = {
  lines: (lines: readonly { ledgerAccount: string; amount: number }[]) =>
    JSON.stringify(lines.map((l) => ({ ledger_account: l.ledgerAccount, amount: l.amount }))),
  balances: (balances: readonly { ledgerAccount: string; slot: number; amount: number }[]) =>
    JSON.stringify(balances.map((b) => ({ ledger_account: b.ledgerAccount, slot: b.slot, amount: b.amount }))),
};

/**
 * The data-modifying CTEs `entry`, `lines` and `balances` that post entries, their lines and their
 * balance changes: the one text that writes the journal, in postJournalEntry's statement and in
 * the one-statement payment finish (src/domain/payments/finish-at-once.ts), which posts a batch.
 *
 * A batch's balance changes are summed per balance row first (a statement cannot update one row
 * twice), then upserted in one order: ledger account (byte order, as balanceChanges sorts), currency,
 * slot. Every posting locks the rows it shares with another in that order, so none deadlock.
 */
export function journalWrites(p: JournalWriteParams): string {
  const from = p.from ? ` FROM ${p.from}` : '';
  const fromAnd = p.from ? `${p.from}, ` : '';
  return `entry AS (
  INSERT INTO journal_entries (account_id, id, livemode, type, currency, source_type, source_id, description, created_at)
  SELECT ${p.account}, ${p.id}, ${p.livemode}, ${p.type}, ${p.currency}, ${p.sourceType}, ${p.sourceId}, ${p.description}, ${p.createdAt}${from}
), lines AS (
  INSERT INTO journal_lines (account_id, entry_id, line_no, livemode, ledger_account, amount)
  SELECT ${p.account}, ${p.id}, l.line_no, ${p.livemode}, l.line->>'ledger_account', (l.line->>'amount')::bigint
  FROM ${fromAnd}jsonb_array_elements(${p.lines}) WITH ORDINALITY AS l(line, line_no)
), balances AS (
  INSERT INTO ledger_balances (account_id, livemode, ledger_account, currency, slot, balance)
  SELECT c.account_id, c.livemode, c.ledger_account, c.currency, c.slot, c.amount FROM (
    SELECT ${p.account} AS account_id, ${p.livemode} AS livemode, b.value->>'ledger_account' AS ledger_account, ${p.currency} AS currency,
           (b.value->>'slot')::int AS slot, sum((b.value->>'amount')::bigint)::bigint AS amount
    FROM ${fromAnd}jsonb_array_elements(${p.balances}) AS b
    GROUP BY 1, 2, 3, 4, 5
  ) c
  ORDER BY c.ledger_account COLLATE "C", c.currency, c.slot
  ON CONFLICT (account_id, livemode, ledger_account, currency, slot) DO UPDATE SET balance = ledger_balances.balance + excluded.balance
)`;
}
