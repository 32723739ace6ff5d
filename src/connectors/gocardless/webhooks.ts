// GoCardless webhooks: a batch of events (`{ "events": [ … ] }`) signed in the Webhook-Signature
// header with the hex HMAC-SHA256 of the body under the endpoint's secret, verified by the SDK's
// own verifySignature. GoCardless signs no timestamp, so there is no staleness to check: a
// replayed batch is recognised by its events' ids (the core's deduplication) instead.
//
// Each event becomes one report about the mandate or payment its resource_metadata names (our id,
// set at creation); the status it reports follows from its action (mapping.ts). Events about
// anything else (other resources, objects not ours, actions that move no status) are answered
// with an empty reference: acknowledged, applied to nothing.
import type { Event } from 'gocardless-nodejs/types';
import { verifySignature } from 'gocardless-nodejs/webhooks';
import { WebhookVerificationError, type InboundEvent, type InboundWebhook } from '../types.js';
import { MANDATE_ACTIONS, MANDATE_KEY, mandateStateOf, PAYMENT_ACTIONS, PAYMENT_KEY, paymentStateOf } from './mapping.js';

function verified(secrets: string[], input: InboundWebhook): void {
  const header = input.headers['webhook-signature'];
  const signature = Array.isArray(header) ? header[0] : header;
  if (!signature || secrets.length === 0) throw new WebhookVerificationError('signature_invalid', 'The Webhook-Signature header is missing or the account has no webhook secret.');
  for (const secret of secrets) {
    try {
      verifySignature(input.rawBody, secret, signature);
      return;
    } catch {
      // The next secret (the previous one, in its grace period) may verify it.
    }
  }
  throw new WebhookVerificationError('signature_invalid', 'The Webhook-Signature header does not verify with the webhook secret of this connector account.');
}

const ignored = (event: Event): InboundEvent => ({ eventId: event.id ?? '', object: 'payment', reference: '', state: { kind: 'pending', connectorReference: '' } });

/** One GoCardless event in our words. */
export function inboundEventOf(event: Event): InboundEvent {
  const eventId = event.id ?? '';
  const meta = (event.resource_metadata ?? {}) as Record<string, unknown>;
  const details = event.details ?? {};
  if (event.resource_type === 'mandates') {
    const status = event.action ? MANDATE_ACTIONS[event.action] : undefined;
    const reference = meta[MANDATE_KEY];
    if (!status || typeof reference !== 'string' || !event.links?.mandate) return ignored(event);
    return { eventId, object: 'mandate', reference, state: mandateStateOf({ id: event.links.mandate, status }, details) };
  }
  if (event.resource_type === 'payments') {
    const status = event.action ? PAYMENT_ACTIONS[event.action] : undefined;
    const reference = meta[PAYMENT_KEY];
    if (!status || typeof reference !== 'string' || !event.links?.payment) return ignored(event);
    return { eventId, object: 'payment', reference, state: paymentStateOf({ id: event.links.payment, status }, details) };
  }
  return ignored(event);
}

export function parseGoCardlessWebhook(secrets: string[], input: InboundWebhook): InboundEvent[] {
  verified(secrets, input);
  let body: { events?: unknown };
  try {
    body = JSON.parse(input.rawBody) as { events?: unknown };
  } catch {
    throw new WebhookVerificationError('payload_invalid', 'The webhook body is not valid JSON.');
  }
  if (!Array.isArray(body.events)) throw new WebhookVerificationError('payload_invalid', 'The webhook body is not a GoCardless batch of events.');
  const events = body.events as Event[];
  if (events.some((event) => typeof event?.id !== 'string' || !event.id)) throw new WebhookVerificationError('payload_invalid', 'An event of the batch has no id.');
  return events.map(inboundEventOf);
}
