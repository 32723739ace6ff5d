// The card networks' reattempt limits (API.md §7, docs/declines.md "Reattempt limits"), counted
// per account, mode and keyed card fingerprint in card_reattempts: every issuer decline of a card
// is recorded, and every reattempt — a cascaded attempt (cascade.ts), or an off-session payment of
// a card declined in the last 30 days. A customer present paying again is no reattempt.
//
//   Visa (and every brand but Mastercard): no reattempt after a category 1 decline (do_not_retry),
//   at most 15 reattempts in 30 days;
//   Mastercard: no reattempt after merchant advice 03 or 21 (do_not_retry), none after advice 24–30
//   until the wait it advises has passed (1 hour to 10 days: ADVISED_WAITS), at most 10 in 24 hours.
//
// Past a limit the payment fails retry_limit_reached and nobody is called. The checks and the
// records of one card run one after the other (a transaction-level advisory lock on the card), so
// two payments of the card at once cannot both take the last reattempt.
import { and, eq, gte, sql } from 'drizzle-orm';
import { ADVISED_WAITS } from '../../connectors/declines.js';
import type { DeclineType } from '../../kernel/decline-types.js';
import type { Tenancy } from '../../vault/vault.js';
import type { Db, Executor } from '../../storage/db.js';
import { lockTenantKey } from '../../storage/locks.js';
import { prepared } from '../../storage/prepared.js';
import { cardReattempts, type payments } from '../../storage/schema.js';

type PaymentRow = typeof payments.$inferSelect;

const DAY_MS = 86_400_000;

/** A network's limits: reattempts allowed within a window after a decline. */
interface NetworkLimit {
  network: string;
  max: number;
  windowMs: number;
  window: string;
}

const VISA: NetworkLimit = { network: 'Visa', max: 15, windowMs: 30 * DAY_MS, window: '30 days' };
const MASTERCARD: NetworkLimit = { network: 'Mastercard', max: 10, windowMs: DAY_MS, window: '24 hours' };
/** How long a decline makes the card's next off-session payment a reattempt, and a do_not_retry forbids one. */
const MEMORY_MS = 30 * DAY_MS;

const limitOf = (brand: string): NetworkLimit => (brand === 'mastercard' ? MASTERCARD : VISA);

export interface CardKey {
  fingerprint: string;
  brand: string;
}

/** The card a payment charges, as the limits count it; undefined for a direct debit. */
export function cardKeyOf(row: Pick<PaymentRow, 'paymentMethod'>): CardKey | undefined {
  const card = (row.paymentMethod as { card?: { fingerprint?: string; brand?: string } }).card;
  return card?.fingerprint ? { fingerprint: card.fingerprint, brand: card.brand ?? 'unknown' } : undefined;
}

const card = (ctx: Tenancy, key: CardKey) =>
  and(eq(cardReattempts.accountId, ctx.accountId), eq(cardReattempts.livemode, ctx.livemode), eq(cardReattempts.cardFingerprint, key.fingerprint));

/** An issuer's decline as the limits read it: its type, and the merchant advice code it came with. */
export interface CardDecline {
  declineType: DeclineType;
  merchantAdvice?: string | null;
}

/** Records an issuer's decline of the card (a processor's own refusal says nothing about the card). */
export async function recordDecline(tx: Executor, ctx: Tenancy, key: CardKey, paymentId: string, declined: CardDecline, now: Date): Promise<void> {
  if (declined.declineType === 'processor') return;
  await tx.insert(cardReattempts).values({ ...tenancy(ctx, key), kind: 'declined', declineType: declined.declineType, merchantAdvice: declined.merchantAdvice ?? null, paymentId, createdAt: now });
}

/**
 * Why a decline's advised wait (Mastercard advice 24–30) still forbids a reattempt at `now`, or
 * undefined once every wait has passed; the advice codes are Mastercard's, so a card of any other
 * brand has none to wait for (docs/declines.md).
 */
function adviceUnmet(key: CardKey, declines: readonly { merchantAdvice: string | null; createdAt: Date }[], now: Date): string | undefined {
  if (key.brand !== 'mastercard') return undefined;
  for (const d of declines) {
    const wait = d.merchantAdvice !== null && Object.hasOwn(ADVISED_WAITS, d.merchantAdvice) ? ADVISED_WAITS[d.merchantAdvice]! : undefined;
    if (!wait || d.createdAt.getTime() + wait.ms <= now.getTime()) continue;
    const until = new Date(d.createdAt.getTime() + wait.ms).toISOString();
    return `The issuer declined this card with Mastercard merchant advice ${d.merchantAdvice} (retry after ${wait.label}); no reattempt before ${until}, so nothing was sent.`;
  }
  return undefined;
}

const tenancy = (ctx: Tenancy, key: CardKey) => ({ accountId: ctx.accountId, livemode: ctx.livemode, cardFingerprint: key.fingerprint, brand: key.brand });

/**
 * Takes one reattempt of the card, in the caller's transaction: why the networks forbid it (the
 * failure message), or undefined once it is recorded. `always`: a cascaded attempt is a reattempt
 * whatever came before; otherwise (an off-session payment) only after a recent decline.
 */
export async function takeReattempt(tx: Executor, ctx: Tenancy, key: CardKey, paymentId: string, now: Date, always: boolean): Promise<string | undefined> {
  await lockTenantKey(tx, 'card_reattempts', ctx, key.fingerprint);
  const since = new Date(now.getTime() - MEMORY_MS);
  const recent = await tx
    .select({ kind: cardReattempts.kind, declineType: cardReattempts.declineType, merchantAdvice: cardReattempts.merchantAdvice, createdAt: cardReattempts.createdAt })
    .from(cardReattempts)
    .where(and(card(ctx, key), gte(cardReattempts.createdAt, since)));
  const declines = recent.filter((r) => r.kind === 'declined');
  if (!always && declines.length === 0) return undefined;
  const limit = limitOf(key.brand);
  if (declines.some((r) => r.declineType === 'do_not_retry')) {
    return `The issuer declined this card saying never to try it again (do_not_retry); ${limit.network}'s rules forbid any reattempt, so nothing was sent.`;
  }
  const waiting = adviceUnmet(key, declines, now);
  if (waiting) return waiting;
  const from = now.getTime() - limit.windowMs;
  const taken = recent.filter((r) => r.kind === 'reattempt' && r.createdAt.getTime() >= from).length;
  if (taken >= limit.max) {
    return `This card was reattempted ${taken} times in ${limit.window} after declines, ${limit.network}'s limit; nothing was sent.`;
  }
  await tx.insert(cardReattempts).values({ ...tenancy(ctx, key), kind: 'reattempt', paymentId, createdAt: now });
  return undefined;
}

/** One recent decline of the card, if any: the read every off-session payment makes, built once (values given encoded). */
const recentDecline = prepared((db) =>
  db
    .select({ kind: cardReattempts.kind })
    .from(cardReattempts)
    .where(
      and(
        eq(cardReattempts.accountId, sql.placeholder('accountId')),
        eq(cardReattempts.livemode, sql.placeholder('livemode')),
        eq(cardReattempts.cardFingerprint, sql.placeholder('fingerprint')),
        eq(cardReattempts.kind, 'declined'),
        gte(cardReattempts.createdAt, sql.placeholder('since')),
      ),
    )
    .limit(1),
);

/**
 * An off-session payment's reattempt check: a read without the lock first, as most cards have no
 * recent decline and then nothing is counted; only a card with one takes the lock and a reattempt.
 * A decline recorded just after the read is missed as it would be under the lock (declines are
 * recorded without it); the lock only orders the reattempts counted.
 */
export async function takeOffSessionReattempt(db: Db, ctx: Tenancy, key: CardKey, paymentId: string, now: Date): Promise<string | undefined> {
  const [declined] = await recentDecline(db, { accountId: ctx.accountId, livemode: ctx.livemode, fingerprint: key.fingerprint, since: new Date(now.getTime() - MEMORY_MS).toISOString() });
  if (!declined) return undefined;
  return db.transaction((tx) => takeReattempt(tx, ctx, key, paymentId, now, false));
}

/** Test helper (POST /v1/test-helpers/retry-limits/reset): the mode's counts cleared; how many records went. */
export async function resetReattempts(tx: Executor, ctx: Tenancy): Promise<number> {
  const gone = await tx
    .delete(cardReattempts)
    .where(and(eq(cardReattempts.accountId, ctx.accountId), eq(cardReattempts.livemode, ctx.livemode)))
    .returning({ id: cardReattempts.paymentId });
  return gone.length;
}
