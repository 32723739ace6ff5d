// What a simulated processor answers one request with, before it goes on the wire (server.ts) or
// back to the caller in the same process (connector.ts).
import type { SimError, SimErrorCode } from './protocol.js';

export interface SimResponse {
  status: number;
  body: unknown;
  /**
   * The processor acted but does not answer (the timeout scenario). The transport holds the call
   * until the caller gives up, at most HOLD_LIMIT_MS, and then calls `hungUp`: the processor
   * reports the outcome by webhook only once its delay has passed after that, so the caller always
   * sees its own timeout first, whatever its deadline.
   */
  hang?: { hungUp(): Promise<void> };
}

/**
 * The longest a request is held unanswered (as a processor's load balancer would cut an idle
 * connection). Until hung up, the report of its outcome is due this long plus the processor's
 * delay after the request, so that a simulator that died meanwhile still sends it.
 */
export const HOLD_LIMIT_MS = 60_000;

/** What every request moving money carries: our reference, a positive amount in minor units, a currency. */
export function movesMoney(body: unknown): body is { merchant_reference: string; amount_minor: number; currency: string } {
  const b = body as { merchant_reference?: unknown; amount_minor?: unknown; currency?: unknown } | undefined;
  return typeof b?.merchant_reference === 'string' && Number.isSafeInteger(b.amount_minor) && (b.amount_minor as number) > 0 && typeof b.currency === 'string';
}

export function simError(status: number, code: SimErrorCode, detail: string): SimResponse {
  const body: SimError = { error: { code, detail } };
  return { status, body };
}
