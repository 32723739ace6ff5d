// Orchestration: which connectors a payment tries, in which order, and the calls themselves.
//
// planRoute: the first rule of the account's routing that matches the payment (currency, amount
// range, method type) names its connectors; with volume weights the first connector is drawn by
// weight (weighted order without replacement, so the others follow as fallbacks), connectors
// without a weight come after in the order listed.
//
// callConnector: one call to one connector under the core's rules (circuit breaker, deadline,
// transport failures in our words). The movement core (src/movement/calls.ts) tries a route with it.
import type { CircuitBreaker } from '../kernel/circuit-breaker.js';
import type { Metrics } from '../metrics/registry.js';
import { isDatabaseUnavailable } from '../kernel/outage.js';
import {
  connectorError,
  isRetryable,
  TransportError,
  type Connector,
  type ConnectorError,
  type ConnectorErrorCode,
  type PaymentMethodType,
} from './types.js';
import type { DeclineType } from '../kernel/decline-types.js';
import type { CascadeRule, RoutingStrategy } from '../storage/routing-rules.js';

export interface RoutingRule {
  name?: string;
  currencies?: string[];
  amount_min?: number;
  amount_max?: number;
  /** 'payout' matches payouts (src/domain/payouts), which are routed by the same rules. */
  payment_method_types?: (PaymentMethodType | 'payout')[];
  strategy?: RoutingStrategy;
  connectors: { name: string; weight?: number }[];
  /** Where a decline goes next (src/domain/payments/cascade.ts); unset: nowhere (a decline ends the payment). */
  cascade?: CascadeRule;
}

/** The strategy a rule orders its connectors by: its own, else `volume_split` when it gives weights, else `priority`. */
export function strategyOf(rule: { strategy?: string; connectors: readonly { weight?: number }[] }): RoutingStrategy {
  return (rule.strategy as RoutingStrategy | undefined) ?? (rule.connectors.some((c) => (c.weight ?? 0) > 0) ? 'volume_split' : 'priority');
}

export interface RouteInput {
  currency: string;
  amount: number;
  paymentMethodType: PaymentMethodType | 'payout';
}

export function ruleMatches(rule: RoutingRule, input: RouteInput): boolean {
  if (rule.currencies && !rule.currencies.includes(input.currency)) return false;
  if (rule.amount_min !== undefined && input.amount < rule.amount_min) return false;
  if (rule.amount_max !== undefined && input.amount > rule.amount_max) return false;
  if (rule.payment_method_types && !rule.payment_method_types.includes(input.paymentMethodType)) return false;
  return true;
}

/** Weighted order without replacement, then the unweighted connectors in the order listed. */
export function orderConnectors(connectors: RoutingRule['connectors'], random: () => number): string[] {
  const weighted = connectors.filter((c) => (c.weight ?? 0) > 0);
  const rest = connectors.filter((c) => !((c.weight ?? 0) > 0)).map((c) => c.name);
  const order: string[] = [];
  const pool = [...weighted];
  while (pool.length) {
    const total = pool.reduce((sum, c) => sum + c.weight!, 0);
    let pick = random() * total;
    let index = pool.findIndex((c) => (pick -= c.weight!) < 0);
    if (index < 0) index = pool.length - 1;
    order.push(pool[index]!.name);
    pool.splice(index, 1);
  }
  return [...order, ...rest];
}

export function planRoute(rules: readonly RoutingRule[], input: RouteInput, random: () => number = Math.random): string[] | undefined {
  const rule = rules.find((r) => ruleMatches(r, input));
  return rule ? orderConnectors(rule.connectors, random) : undefined;
}

export interface ConnectorRegistry {
  get(name: string): Connector | undefined;
  names(): string[];
}

/** Whose movement a call is for: a connector account is only ever used for its own account and mode. */
export interface Owner {
  accountId: string;
  livemode: boolean;
}

/**
 * A route names connectors by key: a connector account by its id (`ca_…`), a built-in connector
 * (the simulators in test mode) by its name.
 */
export const isAccountKey = (key: string): boolean => key.startsWith('ca_');

export interface CallDeps {
  registry: ConnectorRegistry;
  /** Builds the connector of a connector account of `owner` at call time, from its credentials. */
  accounts?: { resolve(key: string, owner: Owner): Promise<Connector | undefined> };
  /** Set by Runtime.callsFor: connector accounts resolve only within it. */
  owner?: Owner;
  breaker: CircuitBreaker;
  timeoutMs: number;
  now: () => Date;
  /** Call latency and skips are counted here, the one way every connector call goes. */
  metrics?: Pick<Metrics, 'connectorCall' | 'connectorSkipped'>;
}

/** The connector a route key stands for; undefined when there is none (or none for this owner). */
export async function resolveConnector(deps: CallDeps, key: string): Promise<Connector | undefined> {
  if (!isAccountKey(key)) return deps.registry.get(key);
  return deps.owner && deps.accounts ? deps.accounts.resolve(key, deps.owner) : undefined;
}

export const ATTEMPT_OUTCOMES = ['succeeded', 'pending', 'requires_action', 'declined', 'error', 'timeout', 'skipped'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

export interface Attempt {
  connector: string;
  outcome: AttemptOutcome;
  error_code: string | null;
  /** A refusal's decline type (src/connectors/declines.ts); null when the outcome is not a refusal or is unknown. */
  decline_type: DeclineType | null;
  duration_ms: number;
  started_at: string;
  /** Stored only: the Mastercard merchant advice code of a refusal that carried one (the reattempt limits read it; the API does not show it). */
  merchant_advice?: string;
}

export type Guarded<T> = { result: T | ConnectorError; durationMs: number; startedAt: Date } | { skipped: true; startedAt: Date };

/**
 * One call to one connector under the core's rules: skipped while its circuit is open, bounded by
 * the timeout, transport failures turned into our error codes, the outcome fed to the breaker.
 * `operation` names the call in the metrics (`payment.send`, `refund.status`, …).
 */
export async function callConnector<T extends { kind: string }>(
  deps: CallDeps,
  name: string,
  call: (connector: Connector, signal: AbortSignal) => Promise<T | ConnectorError>,
  operation = 'call',
): Promise<Guarded<T>> {
  const startedAt = deps.now();
  const connector = await resolveConnector(deps, name);
  if (!connector) {
    return { result: connectorError('request_rejected', `connector ${name} is not configured`), durationMs: 0, startedAt };
  }
  if (!deps.breaker.tryAcquire(name)) {
    deps.metrics?.connectorSkipped(name);
    return { skipped: true, startedAt };
  }
  const started = process.hrtime.bigint();
  let result: T | ConnectorError;
  // A deadline cleared as soon as the call ends: AbortSignal.timeout would still fire later, and
  // every listener left on it would then build an error nobody reads.
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new DOMException('The connector did not answer in time.', 'TimeoutError')), deps.timeoutMs);
  try {
    result = await call(connector, deadline.signal);
  } catch (err) {
    // Our own database away (the in-process simulator keeps its books in it) is no fault of the
    // connector's: neither its circuit nor the movement should take it for one. The request fails
    // as unavailable, and its retry resumes by asking the connectors what they hold.
    if (!(err instanceof TransportError) && isDatabaseUnavailable(err)) throw err;
    result =
      err instanceof TransportError
        ? connectorError(err.code, err.message)
        : // A bug or an answer the mapping could not read: the processor may have acted.
          connectorError('invalid_response', err instanceof Error ? err.message : String(err));
  } finally {
    clearTimeout(timer);
  }
  const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.kind === 'error') deps.breaker.onFailure(name);
  else deps.breaker.onSuccess(name);
  deps.metrics?.connectorCall(name, operation, result.kind === 'error' ? (result as ConnectorError).code : 'ok', durationMs / 1000);
  return { result, durationMs, startedAt };
}

export function attemptOf(name: string, guarded: Guarded<{ kind: string; failureCode?: string }>): Attempt {
  if ('skipped' in guarded) {
    return { connector: name, outcome: 'skipped', error_code: 'circuit_open', decline_type: null, duration_ms: 0, started_at: guarded.startedAt.toISOString() };
  }
  const r = guarded.result as { kind: string; code?: ConnectorErrorCode; failureCode?: string; declineType?: DeclineType; merchantAdvice?: string };
  let outcome: AttemptOutcome;
  let errorCode: string | null = null;
  let declineType: DeclineType | null = null;
  switch (r.kind) {
    case 'succeeded':
    case 'pending':
    case 'requires_action':
      outcome = r.kind;
      break;
    case 'declined':
    case 'failed':
      outcome = 'declined';
      errorCode = r.failureCode ?? null;
      declineType = r.declineType ?? null;
      break;
    default:
      outcome = r.code === 'timeout' ? 'timeout' : 'error';
      errorCode = r.code ?? null;
      // Refused before acting: the processor's own refusal. Anything else is unknown, never a decline.
      if (isRetryable(r)) declineType = 'processor';
  }
  return {
    connector: name,
    outcome,
    error_code: errorCode,
    decline_type: declineType,
    duration_ms: Math.round(guarded.durationMs * 100) / 100,
    started_at: guarded.startedAt.toISOString(),
    ...(outcome === 'declined' && r.merchantAdvice ? { merchant_advice: r.merchantAdvice } : {}),
  };
}

/**
 * For a route that ended in `error`: the connector that may have acted on the request, or null
 * when certainly nothing was done anywhere (no connector took it, or the one that did refused it
 * as such). A connector that may have acted leaves the object to be verified — never failed,
 * never retried elsewhere.
 */
export function connectorThatMayHaveActed(connector: string | null, error: ConnectorError): string | null {
  return error.code === 'request_rejected' ? null : connector;
}
