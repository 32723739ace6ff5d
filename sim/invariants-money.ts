// The invariants of disputes and reconciliation (docs/disputes.md, docs/reconciliation.md): the
// money a dispute took out of the ledger and gave back matches its outcome and the simulated
// processor's own book of it; the API refused what it must refuse (refunds of disputed payments,
// answers to disputes that no longer wait, cascades on final declines) and nothing else; and every
// nightly reconciliation of the simulators' settlement reports against the ledger found nothing.
import { sql } from 'drizzle-orm';
import { toPublicId } from '../src/kernel/ids.js';
import { rows, type Invariant } from './query.js';

/** Whether a dispute in this status has its funds out of the balance: the simulators withdraw them when it opens; only a won one has them back. */
const FUNDS_OUT: Record<string, number> = { warning_needs_response: 0, needs_response: 1, under_review: 1, won: 0, lost: 1, accepted: 1 };
const STATUS_OF: Record<string, string> = { NEEDS_RESPONSE: 'needs_response', UNDER_REVIEW: 'under_review', WON: 'won', LOST: 'lost', ACCEPTED: 'accepted' };

async function disputesWithBooks(s: Parameters<Invariant>[0]) {
  return rows(s.database.db, sql`
    SELECT d.id::text, d.status, d.amount, d.connector_reference,
      count(*) FILTER (WHERE e.type = 'dispute_withdrawal')::int AS withdrawn,
      count(*) FILTER (WHERE e.type = 'dispute_reinstatement')::int AS reinstated,
      coalesce((SELECT sum(l.amount) FROM journal_lines l JOIN journal_entries j ON j.account_id = l.account_id AND j.id = l.entry_id
        WHERE j.account_id = d.account_id AND j.source_id = d.id AND j.type IN ('dispute_withdrawal', 'dispute_reinstatement') AND l.ledger_account = 'processor_clearing'), 0)::bigint AS clearing,
      p.body->>'state' AS theirs, (p.body->>'funds_withdrawn')::boolean AS their_withdrawn, (p.body->>'funds_reinstated')::boolean AS their_reinstated
    FROM disputes d
    LEFT JOIN journal_entries e ON e.account_id = d.account_id AND e.source_id = d.id
    LEFT JOIN simulator_objects p ON p.kind = 'dispute' AND p.object_id = d.connector_reference
    GROUP BY d.id, d.account_id, d.status, d.amount, d.connector_reference, p.body`);
}

/**
 * Every step: a dispute's journal entries took its amount out once and gave it back at most once,
 * as its status says (out while open, lost or accepted; back once won), the processor's clearing
 * account moved by exactly that amount, and we never booked a withdrawal or reinstatement the
 * processor has not made. At the end (every report delivered) ours and the processor's agree: the
 * same outcome, the same withdrawal and reinstatement.
 */
const disputeFunds = (atTheEnd: boolean): Invariant => async (s) => {
  const found: string[] = [];
  for (const d of await disputesWithBooks(s)) {
    const id = toPublicId('dp', d.id);
    const out = d.withdrawn - d.reinstated;
    if (d.withdrawn > 1 || d.reinstated > 1 || out !== FUNDS_OUT[d.status]) found.push(`dispute ${id} is ${d.status}: ${d.withdrawn} withdrawal(s), ${d.reinstated} reinstatement(s)`);
    if (Number(d.clearing) !== -Number(d.amount) * out) found.push(`dispute ${id} (${d.amount}): processor clearing moved ${d.clearing} for ${out} withdrawal(s) outstanding`);
    if (!d.theirs) {
      found.push(`dispute ${id}: no simulated processor holds ${d.connector_reference}`);
      continue;
    }
    if (d.withdrawn > (d.their_withdrawn ? 1 : 0) || d.reinstated > (d.their_reinstated ? 1 : 0)) found.push(`dispute ${id}: booked ${d.withdrawn} withdrawal(s) and ${d.reinstated} reinstatement(s), the processor made ${d.their_withdrawn ? 1 : 0} and ${d.their_reinstated ? 1 : 0}`);
    if (atTheEnd && (STATUS_OF[d.theirs] !== d.status || d.withdrawn !== (d.their_withdrawn ? 1 : 0) || d.reinstated !== (d.their_reinstated ? 1 : 0))) {
      found.push(`dispute ${id} is ${d.status} (${d.withdrawn} out, ${d.reinstated} back); the processor's is ${d.theirs} (withdrawn ${d.their_withdrawn}, reinstated ${d.their_reinstated})`);
    }
  }
  if (atTheEnd) {
    // Every chargeback the processors opened on our payments became a dispute of ours.
    const missing = await rows(s.database.db, sql`
      SELECT p.processor, p.object_id, p.reference FROM simulator_objects p
      WHERE p.kind = 'dispute' AND p.body->>'state' <> 'OPENING' AND NOT EXISTS (SELECT 1 FROM disputes d WHERE d.connector_reference = p.object_id)`);
    found.push(...missing.map((p) => `${p.processor} opened ${p.object_id} on ${p.reference}; no dispute of ours`));
  }
  return found;
};

export const disputeFundsMatchOutcomes = disputeFunds(false);
export const disputesEndAsTheProcessorDecided = disputeFunds(true);

/** What the API answered where the docs say it must refuse, or refused where they say it must not (collected as the merchants went). */
export const refusedWhatMustBeRefused: Invariant = async (_s, model) => model.wrongAnswers;

/**
 * Every reconciliation run (each simulated night, each simulator connector account) found the
 * processor's report and the ledger in agreement: the simulation plants no difference.
 */
export const reconciliationFindsNoException: Invariant = async (s) => {
  const found = await rows(s.database.db, sql`SELECT r.id::text, r.connector, r.period_start, x AS exception FROM reconciliation_runs r, jsonb_array_elements(r.exceptions) x`);
  return found.map((r) => `${toPublicId('rec', r.id)} (${r.connector}, night of ${new Date(r.period_start).toISOString().slice(0, 10)}): ${JSON.stringify(r.exception)}`);
};

export const MONEY_INVARIANTS: Record<string, Invariant> = { disputeFundsMatchOutcomes, refusedWhatMustBeRefused, reconciliationFindsNoException };
