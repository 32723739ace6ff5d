// The simulator connector: one instance per simulated processor, reaching it in process (the
// default) or over HTTP (SIMULATOR_URL, a server from `npm run simulator`). It builds the
// processor's requests, reads its answers through transformers.ts and verifies its webhooks.
import { TransportError, WebhookVerificationError, type Connector, type InboundEvent, type InboundWebhook } from '../types.js';
import type { HttpClient } from '../http.js';
import type { SimulatorHost } from './processor.js';
import { SIM_SIGNATURE_HEADER } from './protocol.js';
import { processorSecret, verifySignature } from './signing.js';
import {
  chargeAnswer,
  chargeStatusAnswer,
  inboundEventOf,
  mandateAnswer,
  mandateStatusAnswer,
  toMandateRequest,
  refundAnswer,
  refundStatusAnswer,
  toChargeRequest,
  toRefundRequest,
} from './transformers.js';
import { payoutAnswer, payoutStatusAnswer, toPayoutRequest } from './payout-transformers.js';

export interface SimulatorTransport {
  send(method: 'GET' | 'POST', path: string, body: unknown, signal: AbortSignal): Promise<{ status: number; body: unknown }>;
}

function waitForAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const fail = () => reject(new TransportError('timeout', 'the simulated processor did not answer in time'));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}

/** `answer`, or a timeout error when `signal` aborts first; the listener goes when `answer` settles. */
function beforeAbort<T>(answer: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const fail = () => reject(new TransportError('timeout', 'the simulated processor did not answer in time'));
    signal.addEventListener('abort', fail, { once: true });
    answer.then(resolve, reject).finally(() => signal.removeEventListener('abort', fail));
  });
}

/** Calls the host's processors directly; a hanging answer lasts until the caller's deadline. */
export function inProcessTransport(host: SimulatorHost): SimulatorTransport {
  return {
    async send(method, path, body, signal) {
      if (signal.aborted) throw new TransportError('connect_timeout', 'no time left to call the simulated processor');
      // The processor gets its own copy, as it would over the wire.
      const answer = await beforeAbort(host.dispatch(method, path, body === undefined ? undefined : structuredClone(body)), signal);
      if (answer.hang) return waitForAbort(signal);
      return { status: answer.status, body: answer.body === undefined ? undefined : structuredClone(answer.body) };
    },
  };
}

export function httpTransport(baseUrl: string, client: HttpClient): SimulatorTransport {
  const base = baseUrl.replace(/\/$/, '');
  return { send: (method, path, body, signal) => client.request(method, base + path, body, signal) };
}

export const WEBHOOK_TOLERANCE_S = 300;

export function createSimulatorConnector(opts: { name: string; transport: SimulatorTransport; familySecret: string }): Connector {
  const { name, transport } = opts;
  const secret = processorSecret(opts.familySecret, name);
  const path = (...parts: string[]) => `/${[name, ...parts].map(encodeURIComponent).join('/')}`;
  return {
    name,
    modes: ['test'],
    paymentMethodTypes: ['card', 'mandate'],
    async charge(request, signal) {
      const answer = await transport.send('POST', path('charges'), toChargeRequest(request), signal);
      return chargeAnswer(answer.status, answer.body);
    },
    async chargeStatus(request, signal) {
      const answer = await transport.send('GET', path('charges', request.reference), undefined, signal);
      return chargeStatusAnswer(answer.status, answer.body);
    },
    async refund(request, signal) {
      const answer = await transport.send('POST', path('refunds'), toRefundRequest(request), signal);
      return refundAnswer(answer.status, answer.body);
    },
    async refundStatus(request, signal) {
      const answer = await transport.send('GET', path('refunds', request.reference), undefined, signal);
      return refundStatusAnswer(answer.status, answer.body);
    },
    async resolvePendingCharge(reference, outcome, signal) {
      const state = outcome === 'succeeded' ? 'CAPTURED' : 'REFUSED';
      const answer = await transport.send('POST', path('charges', reference, 'resolve'), { state }, signal);
      return chargeStatusAnswer(answer.status, answer.body);
    },
    async setupMandate(request, signal) {
      const answer = await transport.send('POST', path('mandates'), toMandateRequest(request), signal);
      return mandateAnswer(answer.status, answer.body);
    },
    async mandateStatus(request, signal) {
      const answer = await transport.send('GET', path('mandates', request.reference), undefined, signal);
      return mandateStatusAnswer(answer.status, answer.body);
    },
    async cancelMandate(request, signal) {
      const answer = await transport.send('POST', path('mandates', request.reference, 'cancel'), {}, signal);
      return mandateStatusAnswer(answer.status, answer.body);
    },
    async resolveTestMandate(reference, outcome, signal) {
      const state = outcome === 'active' ? 'ACTIVE' : outcome === 'failed' ? 'REJECTED' : 'REVOKED_BY_PAYER';
      const answer = await transport.send('POST', path('mandates', reference, 'resolve'), { state }, signal);
      return mandateStatusAnswer(answer.status, answer.body);
    },
    async payout(request, signal) {
      const answer = await transport.send('POST', path('payouts'), toPayoutRequest(request), signal);
      return payoutAnswer(answer.status, answer.body);
    },
    async payoutStatus(request, signal) {
      const answer = await transport.send('GET', path('payouts', request.reference), undefined, signal);
      return payoutStatusAnswer(answer.status, answer.body);
    },
    async resolvePendingPayout(reference, outcome, signal) {
      const state = outcome === 'paid' ? 'PAID' : outcome === 'failed' ? 'REJECTED' : 'RETURNED';
      const answer = await transport.send('POST', path('payouts', reference, 'resolve'), { state }, signal);
      return payoutStatusAnswer(answer.status, answer.body);
    },
    parseWebhook(input: InboundWebhook): InboundEvent {
      const header = input.headers[SIM_SIGNATURE_HEADER];
      const check = verifySignature(
        secret,
        Array.isArray(header) ? header[0] : header,
        input.rawBody,
        Math.floor(input.now.getTime() / 1000),
        WEBHOOK_TOLERANCE_S,
      );
      if (check === 'invalid') throw new WebhookVerificationError('signature_invalid', `The ${SIM_SIGNATURE_HEADER} header does not verify with the secret of ${name}.`);
      if (check === 'stale') {
        throw new WebhookVerificationError('timestamp_stale', `The ${SIM_SIGNATURE_HEADER} timestamp is more than ${WEBHOOK_TOLERANCE_S} s away from now.`);
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(input.rawBody);
      } catch {
        throw new WebhookVerificationError('payload_invalid', 'The webhook body is not valid JSON.');
      }
      const event = inboundEventOf(parsed);
      if (!event) throw new WebhookVerificationError('payload_invalid', `The webhook body is not an event of ${name}.`);
      return event;
    },
  };
}
