// The simulated processors' own wire vocabulary, as a real processor's API documentation would
// define it. Nothing outside src/connectors/simulator/ speaks it: transformers.ts maps it onto ours.
// Amounts are integers in minor units, like ours (never floats).

export const SIM_CHARGE_STATES = ['CAPTURED', 'PENDING', 'REFUSED'] as const;
export type SimChargeState = (typeof SIM_CHARGE_STATES)[number];

export const SIM_REFUSALS = ['DO_NOT_HONOUR', 'NOT_ENOUGH_BALANCE', 'EXPIRED_CARD', 'CVC_DECLINED', 'UNKNOWN_CARD'] as const;
export type SimRefusal = (typeof SIM_REFUSALS)[number];

export const SIM_REFUND_STATES = ['REFUNDED', 'REFUND_PENDING', 'REFUND_REFUSED'] as const;
export type SimRefundState = (typeof SIM_REFUND_STATES)[number];

export const SIM_REFUND_REFUSALS = ['CHARGE_NOT_CAPTURED', 'AMOUNT_EXCEEDS_CHARGE'] as const;
export type SimRefundRefusal = (typeof SIM_REFUND_REFUSALS)[number];

export const SIM_ERROR_CODES = ['INTERNAL_ERROR', 'BAD_REQUEST', 'NOT_FOUND', 'IDEMPOTENCY_CONFLICT'] as const;
export type SimErrorCode = (typeof SIM_ERROR_CODES)[number];

/** POST /{processor}/charges — `merchant_reference` is the idempotency key. */
export interface SimChargeRequest {
  merchant_reference: string;
  amount_minor: number;
  currency: string;
  card: { pan: string; expiry_month: number; expiry_year: number; security_code: string };
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
  event_type: 'charge.state_changed' | 'refund.state_changed';
  occurred_at: string;
  charge?: SimCharge;
  refund?: SimRefund;
}

/** Header carrying `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export const SIM_SIGNATURE_HEADER = 'sim-signature';
