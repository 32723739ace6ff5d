// Adyen payouts to beneficiaries' bank accounts, over the Transfers API v4 (transfers.ts says why
// that API): a payout is one POST /transfers from the account's balance account, with our payout id
// as `reference` and as Adyen's Idempotency-Key (a repeat gets Adyen's first answer, never a second
// transfer). Its status is GET /transfers/{id}, or — when Adyen's answer was lost and we hold no
// transfer id — GET /transfers?reference=<our id>, so that a payout whose call timed out, or whose
// request crashed between the phases, is found (or known absent) before anything is sent again.
// Outcomes also come by the balance platform's transfer webhooks (balancePlatform.transfer.created
// and .updated), signed with an HMAC of the raw body in the HmacSignature header and checked with the
// official SDK's validator.
//
// Requests are shaped by the SDK's types and sent by the core's HTTP client, as for cards (connector.ts).
import type { TransferNotificationRequest } from '@adyen/api-library/lib/src/typings/transferWebhooks/transferNotificationRequest.js';
import type { HttpAnswer, HttpClient } from '../http.js';
import { connectorError, WebhookVerificationError, type InboundEvent, type InboundWebhook, type PayoutResult, type PayoutStatusResult } from '../types.js';
import { adyenHmac } from './hmac.js';
import { callErrorOf } from './mapping.js';
import { payoutStateOf, problemOf, transferInfoOf, type TransferAnswer } from './transfers.js';

export const ADYEN_TRANSFERS_VERSION = 'v4';
const BALANCE_PLATFORM = { test: 'https://balanceplatform-api-test.adyen.com', live: 'https://balanceplatform-api-live.adyen.com' };
/** How far back a lookup by reference searches (Adyen allows at most six months per query). */
const LOOKUP_WINDOW_MS = 150 * 24 * 3600 * 1000;

export interface AdyenPayoutOptions {
  /** The balance platform API key (payout_api_key). */
  apiKey: string;
  balanceAccountId: string;
  /** The keys that verify transfer webhooks, newest first. */
  hmacKeys: string[];
  livemode: boolean;
  /** ADYEN_PAYOUT_BASE_URL (an origin); unset: Adyen's balance platform endpoint of the mode. */
  payoutBaseUrl: string | undefined;
  http: HttpClient;
  now?: () => Date;
}

/** Where this account's transfer requests go: configuration, or Adyen's endpoint for the mode — never tenant input. */
export function adyenTransfersBase(opts: Pick<AdyenPayoutOptions, 'livemode' | 'payoutBaseUrl'>): string {
  return `${opts.payoutBaseUrl ?? BALANCE_PLATFORM[opts.livemode ? 'live' : 'test']}/btl/${ADYEN_TRANSFERS_VERSION}`;
}

/** A Transfers API answer other than success, classified as for Checkout (429 before acting; 4xx refused; 5xx unknown). */
const errorOf = (answer: HttpAnswer) => callErrorOf({ status: answer.status, body: problemOf(answer.body) });

export function createAdyenPayouts(opts: AdyenPayoutOptions) {
  const base = adyenTransfersBase(opts);
  const now = opts.now ?? (() => new Date());
  const headers = (idempotencyKey?: string) => ({ 'x-api-key': opts.apiKey, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) });
  const stateOf = (answer: HttpAnswer) =>
    (answer.body as TransferAnswer | undefined)?.id ? payoutStateOf(answer.body as TransferAnswer) : connectorError('invalid_response', `Adyen answered ${answer.status} without a transfer id`);

  async function lookup(reference: string, signal: AbortSignal): Promise<PayoutStatusResult> {
    const until = new Date(now().getTime() + 3600_000);
    const query = new URLSearchParams({
      balanceAccountId: opts.balanceAccountId,
      reference,
      category: 'bank',
      createdSince: new Date(until.getTime() - LOOKUP_WINDOW_MS).toISOString(),
      createdUntil: until.toISOString(),
    });
    const answer = await opts.http.request('GET', `${base}/transfers?${query}`, undefined, signal, headers());
    if (answer.status !== 200) return errorOf(answer);
    const found = ((answer.body as { data?: TransferAnswer[] })?.data ?? []).find((t) => t.reference === reference);
    return found?.id ? payoutStateOf(found) : { kind: 'not_found' };
  }

  return {
    async payout(request: Parameters<typeof transferInfoOf>[0], signal: AbortSignal): Promise<PayoutResult> {
      const body = transferInfoOf(request, opts.balanceAccountId);
      if ('kind' in body) return body;
      const answer = await opts.http.request('POST', `${base}/transfers`, body, signal, headers(request.reference));
      return answer.status === 200 || answer.status === 202 ? stateOf(answer) : errorOf(answer);
    },
    async payoutStatus(request: { reference: string; connectorReference: string | null }, signal: AbortSignal): Promise<PayoutStatusResult> {
      if (!request.connectorReference) return lookup(request.reference, signal);
      const answer = await opts.http.request('GET', `${base}/transfers/${encodeURIComponent(request.connectorReference)}`, undefined, signal, headers());
      if (answer.status === 404) return { kind: 'not_found' };
      return answer.status === 200 ? stateOf(answer) : errorOf(answer);
    },
  };
}

/** Whether an inbound webhook is a balance platform one (signed in a header) rather than a standard notification. */
export function isTransferWebhook(input: InboundWebhook): boolean {
  return input.headers.hmacsignature !== undefined;
}

/**
 * A verified transfer webhook in our words, identified by the transfer and its sequence number
 * (Adyen numbers each change of a transfer). Transfers that are not our payouts from this account's
 * balance account name no reference: acknowledged, not applied.
 */
export function parseTransferWebhook(opts: Pick<AdyenPayoutOptions, 'hmacKeys' | 'livemode'> & { balanceAccountId: string | undefined }, input: InboundWebhook): InboundEvent {
  const header = input.headers.hmacsignature;
  const signature = Array.isArray(header) ? header[0] : header;
  const signed = !!signature && opts.hmacKeys.some((key) => adyenHmac.validateHMACSignature(key, signature, input.rawBody));
  if (!signed) throw new WebhookVerificationError('signature_invalid', 'The HmacSignature header is missing or does not verify with the payout HMAC key of this connector account.');
  let body: Partial<TransferNotificationRequest>;
  try {
    body = JSON.parse(input.rawBody);
  } catch {
    throw new WebhookVerificationError('payload_invalid', 'The webhook body is not JSON.');
  }
  const data = body?.data;
  if (!data || typeof data !== 'object' || typeof data.id !== 'string') throw new WebhookVerificationError('payload_invalid', 'The webhook is not an Adyen transfer webhook.');
  const environment = opts.livemode ? 'live' : 'test';
  if (body.environment !== environment) throw new WebhookVerificationError('payload_invalid', `A ${body.environment} transfer webhook was sent to a ${environment} connector account.`);
  const eventId = `transfer:${data.id}:${data.sequenceNumber ?? data.status}`;
  const ours = data.category === 'bank' && data.direction !== 'incoming' && data.balanceAccount?.id === opts.balanceAccountId && typeof data.reference === 'string';
  const state = payoutStateOf(data as TransferAnswer);
  return { eventId, object: 'payout', reference: ours ? data.reference! : '', state };
}
