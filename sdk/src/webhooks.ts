// Verifies an event sent to a webhook endpoint the way the service signs it (Standard Webhooks,
// see src/domain/webhooks/signing.ts in the service): HMAC-SHA256 over "{webhook-id}.{webhook-timestamp}.{body}"
// keyed with the base64 bytes after `whsec_`, sent as space-separated `v1,<base64>` signatures (one
// per secret valid during a rotation), refused when the timestamp is more than 5 minutes away.
import crypto from 'node:crypto';
import type { components } from './openapi.js';

export type Event = components['schemas']['Event'];
export type EventType = Event['type'];
/** The event of one type, its `data.object` typed: `EventOf<'payment.succeeded'>`. */
export type EventOf<T extends EventType> = Extract<Event, { type: T }>;

export const WEBHOOK_TOLERANCE_S = 5 * 60;

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export class WebhookVerificationError extends Error {
  readonly reason: 'headers_missing' | 'timestamp_stale' | 'signature_invalid';
  constructor(reason: WebhookVerificationError['reason'], message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.reason = reason;
  }
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const found = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(found) ? found[0] : found;
}

export interface VerifyOptions {
  /** Seconds since the epoch to judge the timestamp by; now when absent. */
  nowS?: number;
  toleranceS?: number;
}

/**
 * The event in `payload` (the raw body, as received: re-serialised JSON would not verify) when
 * `headers` carry a valid signature made with `secret` (`whsec_…`) within the tolerance; throws
 * WebhookVerificationError otherwise.
 */
export function verify(payload: string | Uint8Array, headers: WebhookHeaders, secret: string, options: VerifyOptions = {}): Event {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('headers_missing', 'webhook-id, webhook-timestamp and webhook-signature are required.');
  const sentS = Number(timestamp);
  const nowS = options.nowS ?? Math.floor(Date.now() / 1000);
  if (!Number.isInteger(sentS) || Math.abs(nowS - sentS) > (options.toleranceS ?? WEBHOOK_TOLERANCE_S)) {
    throw new WebhookVerificationError('timestamp_stale', 'The webhook timestamp is outside the tolerated window; it may be a replay.');
  }
  const body = typeof payload === 'string' ? payload : Buffer.from(payload).toString('utf8');
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  const expected = crypto.createHmac('sha256', key).update(`${id}.${sentS}.${body}`).digest();
  const matches = signatures.split(' ').some((candidate) => {
    const [version, value] = candidate.split(',', 2);
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError('signature_invalid', 'No signature verifies with this secret.');
  return JSON.parse(body) as Event;
}
