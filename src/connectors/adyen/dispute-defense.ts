// The merchant's answer to an Adyen dispute, over the Disputes API v30 — a service of its own host
// (ADYEN_DISPUTE_BASE_URL; unset: Adyen's ca-test or ca-live endpoint by mode; never tenant input).
// Evidence: the defense reasons Adyen says apply (retrieveApplicableDefenseReasons) settle which
// reason defends (the merchant's defense_reason when it is one of them, else the first) and under
// which document type; the text evidence goes as one PDF (pdf.ts) with supplyDefenseDocument, then
// defendDispute. Acceptance: acceptDispute. Each call that acts carries our answer's id (with a
// suffix per step) as its Idempotency-Key, so a resend after a lost answer acts once. Adyen has no
// lookup of an answer: a lost one is sent again. Adyen does not document whether the Disputes API
// honours Idempotency-Key: where it does not, the resend meets the dispute already answered
// (success false, "already defended" / "already accepted"), which is our answer taken, not a
// refusal — so that answer is read as success for the same action (docs/disputes.md).
import type { HttpAnswer, HttpClient } from '../http.js';
import { connectorError, type ConnectorError, type DisputeResponseRequest, type DisputeResponseState } from '../types.js';
import { callErrorOf } from './mapping.js';
import { textPdf } from './pdf.js';

export const ADYEN_DISPUTE_API_VERSION = 'v30';
const SERVICE_PATH = `/ca/services/DisputeService/${ADYEN_DISPUTE_API_VERSION}`;

export interface AdyenDisputeOptions {
  apiKey: string;
  merchantAccount: string;
  livemode: boolean;
  /** ADYEN_DISPUTE_BASE_URL (an origin); unset: Adyen's own endpoint for the mode. */
  disputeBaseUrl: string | undefined;
  http: HttpClient;
}

/** Where this account's Disputes API requests go: configuration, or Adyen's endpoint for the mode. */
export function adyenDisputeBase(opts: Pick<AdyenDisputeOptions, 'livemode' | 'disputeBaseUrl'>): string {
  if (opts.disputeBaseUrl) return `${opts.disputeBaseUrl}${SERVICE_PATH}`;
  return `https://ca-${opts.livemode ? 'live' : 'test'}.adyen.com${SERVICE_PATH}`;
}

type DefenseReason = { defenseReasonCode: string; defenseDocumentTypes?: { defenseDocumentTypeCode: string; requirementLevel?: string }[] };
type ServiceAnswer = { disputeServiceResult?: { success?: boolean; errorMessage?: string }; defenseReasons?: DefenseReason[] };

/** How Adyen says a dispute already has the answer being sent (the wording its own error messages use). */
const ALREADY: Record<DisputeResponseRequest['action'], RegExp> = { submit: /\balready defended\b/i, accept: /\balready accepted\b/i };

const refused = (message: string): DisputeResponseState => ({ kind: 'failed', connectorReference: null, failureCode: 'dispute_response_refused', message: `Adyen refused the answer: ${message}` });

/** The types the one document is supplied as: every type the reason requires, else its first, else generic defense material. */
function documentTypesOf(reason: DefenseReason): string[] {
  const types = reason.defenseDocumentTypes ?? [];
  const required = types.filter((t) => t.requirementLevel === 'Required').map((t) => t.defenseDocumentTypeCode);
  return required.length ? required : [types[0]?.defenseDocumentTypeCode ?? 'DefenseMaterial'];
}

/** The evidence as one document: each field under its name. */
function evidenceText(request: DisputeResponseRequest): string {
  return Object.entries(request.evidence)
    .filter(([, text]) => text.trim() !== '')
    .map(([field, text]) => `${field.replace(/_/g, ' ')}:\n${text}`)
    .join('\n\n');
}

export function createAdyenDisputes(opts: AdyenDisputeOptions) {
  const base = adyenDisputeBase(opts);
  /** One call: Adyen's answer when it took it, a refusal when it said no (success false, or 422), a call error otherwise. */
  async function call(operation: string, body: object, signal: AbortSignal, idempotencyKey?: string): Promise<ServiceAnswer | DisputeResponseState | ConnectorError> {
    const headers = { 'x-api-key': opts.apiKey, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) };
    const answer: HttpAnswer = await opts.http.request('POST', `${base}/${operation}`, { ...body, merchantAccountCode: opts.merchantAccount }, signal, headers);
    const read = answer.body as ServiceAnswer | undefined;
    if (answer.status === 422) return refused((answer.body as { message?: string } | undefined)?.message ?? 'the request was not valid for this dispute');
    if (answer.status < 200 || answer.status >= 300) return callErrorOf(answer);
    if (!read?.disputeServiceResult) return connectorError('invalid_response', `Adyen answered ${operation} without a disputeServiceResult`);
    return read.disputeServiceResult.success ? read : refused(read.disputeServiceResult.errorMessage ?? `${operation} did not succeed`);
  }
  const failed = (step: ServiceAnswer | DisputeResponseState | ConnectorError): step is DisputeResponseState | ConnectorError => 'kind' in step;
  const taken = (request: DisputeResponseRequest): DisputeResponseState => ({ kind: 'succeeded', connectorReference: request.disputeReference });
  /** A refusal saying the dispute already has this very action (a resend of ours whose first answer was lost). */
  const alreadyDone = (step: DisputeResponseState | ConnectorError, action: DisputeResponseRequest['action']) =>
    step.kind === 'failed' && 'failureCode' in step && step.failureCode === 'dispute_response_refused' && ALREADY[action].test(step.message);

  async function defend(request: DisputeResponseRequest, signal: AbortSignal): Promise<DisputeResponseState | ConnectorError> {
    const dispute = { disputePspReference: request.disputeReference };
    const applicable = await call('retrieveApplicableDefenseReasons', dispute, signal);
    if (failed(applicable)) return applicable;
    const reasons = applicable.defenseReasons ?? [];
    const reason = request.defenseReason ? reasons.find((r) => r.defenseReasonCode === request.defenseReason) : reasons[0];
    if (!reason) return refused(request.defenseReason ? `${request.defenseReason} is not a defense reason of this dispute (${reasons.map((r) => r.defenseReasonCode).join(', ') || 'none'})` : 'no defense reason applies to this dispute');
    const content = textPdf(`Defense of dispute ${request.disputeReference}`, evidenceText(request)).toString('base64');
    const defenseDocuments = documentTypesOf(reason).map((defenseDocumentTypeCode) => ({ content, contentType: 'application/pdf', defenseDocumentTypeCode }));
    const supplied = await call('supplyDefenseDocument', { ...dispute, defenseDocuments }, signal, `${request.reference}-document`);
    if (failed(supplied)) return alreadyDone(supplied, 'submit') ? taken(request) : supplied;
    const defended = await call('defendDispute', { ...dispute, defenseReasonCode: reason.defenseReasonCode }, signal, `${request.reference}-defense`);
    return failed(defended) && !alreadyDone(defended, 'submit') ? defended : taken(request);
  }

  return {
    async respondToDispute(request: DisputeResponseRequest, signal: AbortSignal): Promise<DisputeResponseState | ConnectorError> {
      if (request.action === 'submit') return defend(request, signal);
      const accepted = await call('acceptDispute', { disputePspReference: request.disputeReference }, signal, request.reference);
      return failed(accepted) && !alreadyDone(accepted, 'accept') ? accepted : taken(request);
    },
    // No lookup: the answer is sent again, each step under its own key.
    disputeResponseStatus: async (): Promise<{ kind: 'not_found' }> => ({ kind: 'not_found' }),
  };
}
