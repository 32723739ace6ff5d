// The shapes routing rules are stored and cached in (src/domain/routing/cache.ts), with the schema
// whose columns hold them: the router that calls through them (src/connectors/router.ts) and the
// runtime, which holds the cache, read them from here and depend on nothing of the routing service.
import type { DeclineType } from '../kernel/decline-types.js';

/**
 * A rule's cascade (API.md §7): a payment declined with one of `on` is sent, as a new attempt, to
 * the rule's next connector that has not declined it, up to `max_attempts` attempts in all.
 */
export interface CascadeRule {
  on: DeclineType[];
  max_attempts: number;
}

/** A payment's cascade as stored on it: its rule's, frozen at creation, and where its current attempt may go. */
export interface StoredCascade extends CascadeRule {
  /** The connectors the current attempt (n > 1) may go to, in order; unset for the first, which takes the payment's route. */
  route?: string[];
  /** The current attempt asks for 3-D Secure (a retry of an `authentication_required` decline). */
  three_ds?: boolean;
}

/**
 * One connector of a rule as stored: a built-in connector by its name, or a connector account by
 * its id (so that renaming the account keeps the rule).
 */
/** How a rule orders its connectors (docs/routing.md): unset, `volume_split` when it gives weights, else `priority`. */
export const ROUTING_STRATEGIES = ['priority', 'volume_split', 'success_rate'] as const;
export type RoutingStrategy = (typeof ROUTING_STRATEGIES)[number];

export type StoredChoice = { name: string; weight?: number } | { connector_account: string; weight?: number };

export interface StoredRule {
  name?: string;
  currencies?: string[];
  amount_min?: number;
  amount_max?: number;
  payment_method_types?: ('card' | 'mandate' | 'payout')[];
  strategy?: RoutingStrategy;
  connectors: StoredChoice[];
  cascade?: CascadeRule;
}

/** A connector account as routing knows it. */
export interface AccountRef {
  /** Its public id (ca_…), also its route key. */
  id: string;
  name: string;
  connector: string;
  status: 'enabled' | 'disabled';
  /** The credential fields it has set (names only): some capabilities need optional ones (Adyen payouts). */
  fields: string[];
}

export interface RoutingCacheEntry {
  /** Undefined until the account stores its own rules for the mode. */
  rules: StoredRule[] | undefined;
  /** The mode's connector accounts not deleted, oldest first. */
  accounts: AccountRef[];
  version: number;
  updatedAt: Date | null;
  fetchedAtMs: number;
}

/** One connector's outcomes in one segment over the window (src/domain/routing/stats.ts). */
export interface SegmentOutcomes {
  connector: string;
  card_brand: string | null;
  currency: string;
  issuing_country: string | null;
  attempts: number;
  authorized: number;
}

export interface RoutingStatsEntry {
  rows: SegmentOutcomes[];
  fetchedAtMs: number;
  /** A read is under way to replace the entry. */
  refreshing?: boolean;
}

/** Why a connector of the rule is not tried first, or at all. */
export const SKIP_REASONS = ['breaker_open', 'currency_not_supported', 'amount_limit', 'capability_missing', 'already_declined'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export interface Candidate {
  connector: string;
  /** success_rate in a warm segment: the connector's score (rate plus exploration bonus). */
  score?: number;
  skipped?: SkipReason;
}

/** Why a movement goes where it goes (src/domain/routing/strategy.ts), kept with the payment. */
export interface RoutingExplanation {
  /** The rule that matched: its name, else its place in GET /v1/routing (`rules.0`); null when none did. */
  rule: string | null;
  strategy: RoutingStrategy;
  candidates: Candidate[];
  /** The connector the movement goes to first; the payment's answer names the one of its final attempt. */
  chosen: string | null;
}

