// The simulated processors' own wire vocabulary, as a real processor's API documentation would
// define it. Nothing outside src/connectors/simulator/ speaks it: transformers.ts maps it onto ours.
// Amounts are integers in minor units, like ours (never floats).

/** AUTHORISED: held for a manual capture (`capture: 'MANUAL'`); VOIDED: that hold released at the merchant's request. */
export const SIM_CHARGE_STATES = ['CAPTURED', 'PENDING', 'AWAITING_AUTHENTICATION', 'AUTHORISED', 'VOIDED', 'REFUSED'] as const;
export type SimChargeState = (typeof SIM_CHARGE_STATES)[number];

export const SIM_REFUSALS = [
  'DO_NOT_HONOUR',
  /** The card is reported stolen: the issuer will never approve it. */
  'STOLEN_CARD',
  'NOT_ENOUGH_BALANCE',
  'EXPIRED_CARD',
  'CVC_DECLINED',
  'UNKNOWN_CARD',
  /** The card needs 3-D Secure and the request gave no return_url. */
  'AUTHENTICATION_REQUIRED',
  /** The issuer's soft decline: the card needs 3-D Secure and the request did not ask for it (three_d_secure). */
  'AUTHENTICATION_NOT_REQUESTED',
  /** The cardholder failed (or the merchant's customer abandoned) the challenge. */
  'AUTHENTICATION_FAILED',
  // direct debits
  'DEBIT_RETURNED',
  'MANDATE_NOT_ACTIVE',
] as const;
export type SimRefusal = (typeof SIM_REFUSALS)[number];

export const SIM_REFUND_STATES = ['REFUNDED', 'REFUND_PENDING', 'REFUND_REFUSED'] as const;
export type SimRefundState = (typeof SIM_REFUND_STATES)[number];

export const SIM_REFUND_REFUSALS = ['CHARGE_NOT_CAPTURED', 'AMOUNT_EXCEEDS_CHARGE'] as const;
export type SimRefundRefusal = (typeof SIM_REFUND_REFUSALS)[number];

export const SIM_ERROR_CODES = ['INTERNAL_ERROR', 'BAD_REQUEST', 'NOT_FOUND', 'IDEMPOTENCY_CONFLICT'] as const;
export type SimErrorCode = (typeof SIM_ERROR_CODES)[number];

/** POST /{processor}/charges — `merchant_reference` is the idempotency key. Either `card` or `mandate_id` (a direct debit). */
export interface SimChargeRequest {
  merchant_reference: string;
  amount_minor: number;
  currency: string;
  card?: { pan: string; expiry_month: number; expiry_year: number; security_code: string };
  mandate_id?: string;
  /** Where the cardholder goes after a 3-D Secure challenge; without it, a card that needs one is refused AUTHENTICATION_REQUIRED. */
  return_url?: string;
  /** MANUAL: authorise only, captured later by POST /{processor}/captures (default AUTOMATIC). */
  capture?: 'AUTOMATIC' | 'MANUAL';
  /** REQUESTED: ask the issuer for 3-D Secure even where it would not start it (a soft decline's retry). */
  three_d_secure?: 'REQUESTED';
  /** An account verification: amount_minor 0, the card authorised and nothing charged. */
  verification?: boolean;
}

export interface SimCharge {
  charge_id: string;
  merchant_reference: string;
  amount_minor: number;
  currency: string;
  state: SimChargeState;
  refusal: SimRefusal | null;
  refunded_minor: number;
  created_at: string;
  /** Direct debits: the mandate debited. */
  mandate_id?: string;
  /** 3-D Secure: the return_url of the request, and the challenge's secret id (AWAITING_AUTHENTICATION). */
  return_url?: string | null;
  challenge_id?: string;
  /** Manual capture: the charge was authorised only; `captured_minor` is what its captures took so far. */
  capture?: 'MANUAL';
  captured_minor?: number;
  /** The card whose captures the issuer refuses (docs/test-mode.md). */
  capture_declines?: boolean;
  /** The card whose captures stay pending until the control endpoint settles them (docs/test-mode.md). */
  capture_pending?: boolean;
  /** Card charges and verifications: the card scheme's network transaction id, for merchant-initiated payments to cite. */
  network_transaction_id?: string;
  /** Card charges of a test card: the card's issuing country (ISO 3166-1 alpha-2; cards.ts). */
  issuer_country?: string;
}

// ---- captures of a manual charge ----

/** CAPTURE_PENDING: taken, confirmed later (POST /{processor}/captures/{reference}/resolve). */
export const SIM_CAPTURE_STATES = ['CAPTURED', 'CAPTURE_REFUSED', 'CAPTURE_PENDING'] as const;
export type SimCaptureState = (typeof SIM_CAPTURE_STATES)[number];

export const SIM_CAPTURE_REFUSALS = ['CAPTURE_DECLINED', 'AMOUNT_EXCEEDS_AUTHORISATION', 'NOT_AUTHORISED', 'AUTHORISATION_VOIDED'] as const;
export type SimCaptureRefusal = (typeof SIM_CAPTURE_REFUSALS)[number];

/** POST /{processor}/captures — `merchant_reference` (our capture id) is the idempotency key. */
export interface SimCaptureRequest {
  merchant_reference: string;
  charge_reference: string;
  amount_minor: number;
  currency: string;
  /** The last capture: whatever the authorisation still holds is released. */
  final: boolean;
}

export interface SimCapture {
  capture_id: string;
  merchant_reference: string;
  charge_id: string | null;
  amount_minor: number;
  currency: string;
  final: boolean;
  state: SimCaptureState;
  refusal: SimCaptureRefusal | null;
  created_at: string;
}

/**
 * POST /{processor}/charges/{merchant_reference}/challenge — the cardholder's answer on the
 * challenge page (served by the merchant's service for this sandbox). Answers the charge, settled.
 */
export interface SimChallengeAnswer {
  challenge_id: string;
  outcome: 'COMPLETED' | 'FAILED';
}

/** POST /{processor}/refunds — `merchant_reference` (our refund id) is the idempotency key. */
export interface SimRefundRequest {
  merchant_reference: string;
  charge_reference: string;
  amount_minor: number;
}

export interface SimRefund {
  refund_id: string;
  merchant_reference: string;
  charge_id: string | null;
  amount_minor: number;
  state: SimRefundState;
  refusal: SimRefundRefusal | null;
  created_at: string;
}

export interface SimError {
  error: { code: SimErrorCode; detail: string };
}

export interface SimWebhook {
  event_id: string;
  event_type: 'charge.state_changed' | 'refund.state_changed' | 'capture.state_changed' | 'mandate.state_changed' | 'payout.state_changed' | 'dispute.state_changed';
  occurred_at: string;
  charge?: SimCharge;
  capture?: SimCapture;
  refund?: SimRefund;
  mandate?: SimMandate;
  payout?: SimPayout;
  dispute?: SimDispute;
}

// ---- disputes (chargebacks) ----

/** OPENING: the issuer's chargeback is on its way (not reported yet); the rest as named. */
export const SIM_DISPUTE_STATES = ['OPENING', 'NEEDS_RESPONSE', 'UNDER_REVIEW', 'WON', 'LOST', 'ACCEPTED'] as const;
export type SimDisputeState = (typeof SIM_DISPUTE_STATES)[number];

export const SIM_DISPUTE_REASONS = ['FRAUD', 'NOT_RECEIVED', 'NOT_AS_DESCRIBED', 'DUPLICATE', 'CANCELLED_RECURRING', 'CREDIT_NOT_PROCESSED', 'UNRECOGNISED', 'OTHER'] as const;
export type SimDisputeReason = (typeof SIM_DISPUTE_REASONS)[number];

/** A dispute of a charge, held under the charge's merchant reference (one per charge). */
export interface SimDispute {
  dispute_id: string;
  /** The disputed charge's merchant reference (our payment id). */
  merchant_reference: string;
  charge_id: string;
  amount_minor: number;
  currency: string;
  state: SimDisputeState;
  reason: SimDisputeReason;
  /** Whether the processor took the amount from the merchant, and gave it back. */
  funds_withdrawn: boolean;
  funds_reinstated: boolean;
  /** When they were (a settlement report dates its lines then; absent on disputes held before these were kept). */
  funds_withdrawn_at?: string;
  funds_reinstated_at?: string;
  evidence_due_at: string;
  created_at: string;
  /**
   * The merchant's answer, once taken: its merchant_reference (the idempotency key: the same
   * answer again replays the dispute), EVIDENCE or ACCEPTANCE, and the evidence's text.
   */
  answered_by?: string | null;
  answer?: 'EVIDENCE' | 'ACCEPTANCE' | null;
  evidence_text?: string | null;
}

/** POST /{processor}/disputes/{dispute_id}/submit (evidence) or /accept — `merchant_reference` is the idempotency key. */
export interface SimDisputeAnswerRequest {
  merchant_reference: string;
  /** The text evidence by field (submit only). */
  evidence?: Record<string, string>;
}

// ---- direct debit mandates ----

export const SIM_MANDATE_STATES = ['SUBMITTED', 'ACTIVE', 'REJECTED', 'REVOKED_BY_PAYER', 'CANCELLED'] as const;
export type SimMandateState = (typeof SIM_MANDATE_STATES)[number];

export const SIM_MANDATE_REJECTIONS = ['ACCOUNT_CLOSED', 'REFUSED_BY_BANK'] as const;
export type SimMandateRejection = (typeof SIM_MANDATE_REJECTIONS)[number];

export const SIM_SCHEMES = ['SEPA_CORE', 'BACS', 'ACH'] as const;
export type SimScheme = (typeof SIM_SCHEMES)[number];

/** POST /{processor}/mandates — `merchant_reference` (our mandate id) is the idempotency key. */
export interface SimMandateRequest {
  merchant_reference: string;
  scheme: SimScheme;
  currency: string;
  account: { country: string; number: string; bank_code: string | null };
  payer: { email: string; name: string | null };
}

export interface SimMandate {
  mandate_id: string;
  merchant_reference: string;
  scheme: SimScheme;
  currency: string;
  /** Last four characters of the account; the processor's answers never carry the number. */
  account_last4: string;
  state: SimMandateState;
  rejection: SimMandateRejection | null;
  created_at: string;
}

// ---- payouts (credit transfers to a beneficiary's bank) ----

export const SIM_PAYOUT_STATES = ['IN_TRANSIT', 'PAID', 'REJECTED', 'RETURNED'] as const;
export type SimPayoutState = (typeof SIM_PAYOUT_STATES)[number];

export const SIM_PAYOUT_REJECTIONS = ['ACCOUNT_CLOSED', 'REFUSED_BY_BANK'] as const;
export type SimPayoutRejection = (typeof SIM_PAYOUT_REJECTIONS)[number];

/** POST /{processor}/payouts — `merchant_reference` (our payout id) is the idempotency key. */
export interface SimPayoutRequest {
  merchant_reference: string;
  amount_minor: number;
  currency: string;
  account: { country: string; number: string; bank_code: string | null; holder_name: string };
}

export interface SimPayout {
  payout_id: string;
  merchant_reference: string;
  amount_minor: number;
  currency: string;
  /** Last four characters of the account; the processor's answers never carry the number. */
  account_last4: string;
  state: SimPayoutState;
  rejection: SimPayoutRejection | null;
  created_at: string;
}

/** GET /{processor}/settlements?from=&to= — one line per movement of money, `amount_minor` signed as the merchant's money moved. */
export interface SimSettlementLine {
  line_id: string;
  type: 'PAYMENT' | 'REFUND' | 'DISPUTE' | 'PAYOUT';
  merchant_reference: string;
  object_id: string;
  amount_minor: number;
  fee_minor: number;
  currency: string;
  created_at: string;
}

/** Header carrying `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export const SIM_SIGNATURE_HEADER = 'sim-signature';
