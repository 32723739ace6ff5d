// The simulator connector: one instance per simulated processor, reaching it in process (the
// default) or over HTTP (SIMULATOR_URL, a server from `npm run simulator`). It builds the
// processor's requests, reads its answers through transformers.ts and verifies its webhooks.
import {
  beforeAbort,
  TransportError,
  WebhookVerificationError,
  type ChargeResult,
  type ChargeStatusResult,
  type Connector,
  type InboundEvent,
  type InboundWebhook,
  type VerificationStatusResult,
} from '../types.js';
import { verificationOf } from '../verifications.js';
import type { ChallengeResult, TestControls } from '../test-controls.js';
import type { HttpClient } from '../http.js';
import type { SimulatorHost } from './processor.js';
import { SIM_SIGNATURE_HEADER, type SimCharge } from './protocol.js';
import { processorSecret, verifySignature } from './signing.js';
import {
  chargeAnswers,
  inboundEventOf,
  type ChallengePages,
  mandateAnswer,
  mandateStatusAnswer,
  toMandateRequest,
  refundAnswer,
  refundStatusAnswer,
  toChargeRequest,
  toRefundRequest,
  toVerificationRequest,
} from './transformers.js';
import { settlementRecordsOf } from './settlements.js';
import { payoutAnswer, payoutStatusAnswer, toPayoutRequest } from './payout-transformers.js';
import { cancelAnswer, cancelPath, captureAnswer, captureEventOf, captureStatusAnswer, toCaptureRequest } from './capture-transformers.js';
import { disputeAnswerOf, disputeAnswerPath, disputeAnswerStatusOf, toDisputeAnswer } from './dispute-transformers.js';

export interface SimulatorTransport {
  send(method: 'GET' | 'POST', path: string, body: unknown, signal: AbortSignal): Promise<{ status: number; body: unknown }>;
}

/**
 * Calls the host's processors directly. A request the processor leaves unanswered (the timeout
 * scenario) fails at once with the timeout the caller would reach at its deadline: waiting for it
 * in process would teach nothing (no answer is coming) and would make every timeout card take
 * CONNECTOR_TIMEOUT_MS (10 s by default). The caller hangs up at once, so the processor reports
 * the outcome its delay (SIMULATOR_PENDING_DELAY_MS) after this moment, when the caller has its
 * `pending` answer. Over HTTP (server.ts) the connection is really held until the caller's deadline.
 */
export function inProcessTransport(host: SimulatorHost): SimulatorTransport {
  return {
    async send(method, path, body, signal) {
      if (signal.aborted) throw new TransportError('connect_timeout', 'no time left to call the simulated processor');
      // The processor gets its own copy, as it would over the wire.
      const answer = await beforeAbort(host.dispatch(method, path, body === undefined ? undefined : structuredClone(body)), signal, 'the simulated processor did not answer in time');
      if (answer.hang) {
        await answer.hang.hungUp().catch(() => undefined);
        throw new TransportError('timeout', 'the simulated processor did not answer (the timeout scenario, played at once in process)');
      }
      return { status: answer.status, body: answer.body === undefined ? undefined : structuredClone(answer.body) };
    },
  };
}

export function httpTransport(baseUrl: string, client: HttpClient): SimulatorTransport {
  const base = baseUrl.replace(/\/$/, '');
  return { send: (method, path, body, signal) => client.request(method, base + path, body, signal) };
}

export const WEBHOOK_TOLERANCE_S = 300;

/** The answer to a challenge: where the cardholder goes next (the charge's return_url), or why not. */
const challengeAnswer =
  (chargeAnswer: (status: number, body: unknown) => ChargeResult) =>
  (status: number, body: unknown): ChallengeResult => {
    if (status === 404) return { kind: 'not_found' };
    const state = chargeAnswer(status, body);
    if (state.kind === 'error') return state;
    const returnUrl = (body as SimCharge).return_url;
    return { kind: 'answered', returnUrl: typeof returnUrl === 'string' ? returnUrl : null };
  };

/** A verification is a zero-amount charge: its state as a charge's, with the network transaction id a success carries. */
const verificationAnswer =
  (read: (status: number, body: unknown) => ChargeStatusResult) =>
  (status: number, body: unknown): VerificationStatusResult =>
    verificationOf(read(status, body), (body as SimCharge | undefined)?.network_transaction_id ?? null);

const CHARGE_STATE_OF = { succeeded: 'CAPTURED', failed: 'REFUSED' } as const;
const CAPTURE_STATE_OF = { succeeded: 'CAPTURED', failed: 'CAPTURE_REFUSED' } as const;
const MANDATE_STATE_OF = { active: 'ACTIVE', failed: 'REJECTED', revoked: 'REVOKED_BY_PAYER' } as const;
const PAYOUT_STATE_OF = { paid: 'PAID', failed: 'REJECTED', returned: 'RETURNED' } as const;

/** A simulated processor: a connector, with its sandbox's test controls on the same object. */
export function createSimulatorConnector(opts: {
  name: string;
  transport: SimulatorTransport;
  familySecret: string;
  /** The service's public base URL, where this sandbox's challenge pages are served (src/http/routes/challenges.ts); unset: a relative URL. */
  pageBaseUrl?: () => string;
}): Connector & TestControls {
  const { name, transport } = opts;
  const pages: ChallengePages = (charge) =>
    `${opts.pageBaseUrl?.() ?? ''}/v1/connectors/${encodeURIComponent(name)}/challenges/${encodeURIComponent(charge.merchant_reference)}/${charge.challenge_id}`;
  const { answer: chargeAnswer, statusAnswer: chargeStatusAnswer } = chargeAnswers(pages);
  const secret = processorSecret(opts.familySecret, name);
  const path = (...parts: string[]) => `/${[name, ...parts].map(encodeURIComponent).join('/')}`;
  /** One request to the processor, its answer read by `read`. */
  const ask = async <R>(signal: AbortSignal, read: (status: number, body: unknown) => R, method: 'GET' | 'POST', parts: string[], body?: unknown): Promise<R> => {
    const answer = await transport.send(method, path(...parts), body, signal);
    return read(answer.status, answer.body);
  };
  return {
    name,
    modes: ['test'],
    paymentMethodTypes: ['card', 'mandate'],
    charge: (request, signal) => ask(signal, chargeAnswer, 'POST', ['charges'], toChargeRequest(request)),
    chargeStatus: (request, signal) => ask(signal, chargeStatusAnswer, 'GET', ['charges', request.reference]),
    refund: (request, signal) => ask(signal, refundAnswer, 'POST', ['refunds'], toRefundRequest(request)),
    refundStatus: (request, signal) => ask(signal, refundStatusAnswer, 'GET', ['refunds', request.reference]),
    capture: (request, signal) => ask(signal, captureAnswer, 'POST', ['captures'], toCaptureRequest(request)),
    captureStatus: (request, signal) => ask(signal, captureStatusAnswer, 'GET', ['captures', request.reference]),
    cancelAuthorization: (request, signal) => ask(signal, cancelAnswer, 'POST', cancelPath(request), {}),
    respondToDispute: (request, signal) => ask(signal, disputeAnswerOf(request), 'POST', disputeAnswerPath(request), toDisputeAnswer(request)),
    disputeResponseStatus: (request, signal) => ask(signal, disputeAnswerStatusOf(request), 'GET', ['disputes', request.disputeReference]),
    verifyCard: (request, signal) =>
      ask(signal, verificationAnswer(chargeAnswer), 'POST', ['charges'], toVerificationRequest(request)) as ReturnType<NonNullable<Connector['verifyCard']>>,
    verificationStatus: (request, signal) => ask(signal, verificationAnswer(chargeStatusAnswer), 'GET', ['charges', request.reference]),
    setupMandate: (request, signal) => ask(signal, mandateAnswer, 'POST', ['mandates'], toMandateRequest(request)),
    mandateStatus: (request, signal) => ask(signal, mandateStatusAnswer, 'GET', ['mandates', request.reference]),
    cancelMandate: (request, signal) => ask(signal, mandateStatusAnswer, 'POST', ['mandates', request.reference, 'cancel'], {}),
    payout: (request, signal) => ask(signal, payoutAnswer, 'POST', ['payouts'], toPayoutRequest(request)),
    payoutStatus: (request, signal) => ask(signal, payoutStatusAnswer, 'GET', ['payouts', request.reference]),
    settlementRecords: async (period, signal) => {
      const query = new URLSearchParams({ from: period.from.toISOString(), to: period.to.toISOString() });
      const answer = await transport.send('GET', `${path('settlements')}?${query}`, undefined, signal);
      return settlementRecordsOf(answer.status, answer.body);
    },
    resolvePendingCharge: (reference, outcome, signal) =>
      ask(signal, chargeStatusAnswer, 'POST', ['charges', reference, 'resolve'], { state: CHARGE_STATE_OF[outcome] }),
    answerChallenge: (reference, challengeId, outcome, signal) =>
      ask(signal, challengeAnswer(chargeAnswer), 'POST', ['charges', reference, 'challenge'], { challenge_id: challengeId, outcome: outcome === 'completed' ? 'COMPLETED' : 'FAILED' }),
    resolvePendingCapture: (reference, outcome, signal) =>
      ask(signal, captureStatusAnswer, 'POST', ['captures', reference, 'resolve'], { state: CAPTURE_STATE_OF[outcome] }),
    resolveTestMandate: (reference, outcome, signal) =>
      ask(signal, mandateStatusAnswer, 'POST', ['mandates', reference, 'resolve'], { state: MANDATE_STATE_OF[outcome] }),
    resolvePendingPayout: (reference, outcome, signal) =>
      ask(signal, payoutStatusAnswer, 'POST', ['payouts', reference, 'resolve'], { state: PAYOUT_STATE_OF[outcome] }),
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
      const event = inboundEventOf(parsed, pages) ?? captureEventOf(parsed);
      if (!event) throw new WebhookVerificationError('payload_invalid', `The webhook body is not an event of ${name}.`);
      return event;
    },
  };
}
