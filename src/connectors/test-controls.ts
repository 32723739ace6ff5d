// What a test processor offers besides the production Connector interface: settling, now, an
// object it holds pending, as its sandbox's control endpoint would (the test helpers
// POST /v1/test-helpers/{payments,captures,payouts,mandates}/{id}/resolve). Only the simulated processors
// implement it; the registry hands it out for its own built-in instances only
// (Connectors.testControlsOf), so nothing in production code can reach it through another Connector.
import type { CaptureStatusResult, ChargeStatusResult, Connector, ConnectorError, MandateStatusResult, PayoutStatusResult } from './types.js';

/** The cardholder answered a 3-D Secure challenge: where the sandbox sends them next (the charge's return URL). */
export type ChallengeResult = { kind: 'answered'; returnUrl: string | null } | { kind: 'not_found' } | ConnectorError;

export interface TestControls {
  /** Settles a pending charge now. */
  resolvePendingCharge(reference: string, outcome: 'succeeded' | 'failed', signal: AbortSignal): Promise<ChargeStatusResult>;
  /** Confirms or refuses a capture the processor holds pending (card 4000000000000580). */
  resolvePendingCapture(reference: string, outcome: 'succeeded' | 'failed', signal: AbortSignal): Promise<CaptureStatusResult>;
  /** The cardholder's answer on the sandbox's challenge page (card 4000000000003220); not_found for an unknown challenge. */
  answerChallenge(reference: string, challengeId: string, outcome: 'completed' | 'failed', signal: AbortSignal): Promise<ChallengeResult>;
  /** Settles a pending mandate, or has the bank revoke an active one. */
  resolveTestMandate(reference: string, outcome: 'active' | 'failed' | 'revoked', signal: AbortSignal): Promise<MandateStatusResult>;
  /** Settles a pending payout, or has the bank return a paid one. */
  resolvePendingPayout(reference: string, outcome: 'paid' | 'failed' | 'returned', signal: AbortSignal): Promise<PayoutStatusResult>;
}

const CONTROLS = ['resolvePendingCharge', 'resolvePendingCapture', 'answerChallenge', 'resolveTestMandate', 'resolvePendingPayout'] as const satisfies readonly (keyof TestControls)[];

/** A connector that is also a test processor (the simulators implement both interfaces on one object). */
export function hasTestControls(connector: Connector): connector is Connector & TestControls {
  return CONTROLS.every((name) => typeof (connector as Partial<TestControls>)[name] === 'function');
}
