// The body of POST /v1/payments/{id}/cancel. A void has no API object of its own: the answer is the payment.
import { Type, type Static } from 'typebox';
import { CANCELLATION_REASONS } from './state.js';

/** The reasons a merchant may give; `expired` is the worker's own. */
export const REQUESTED_REASONS = CANCELLATION_REASONS.filter((r) => r !== 'expired');

export const CancelPaymentBody = Type.Object(
  {
    cancellation_reason: Type.Optional(
      Type.String({ enum: [...REQUESTED_REASONS], description: 'Why the authorisation is voided; default requested_by_customer. The payment shows it as cancellation_reason.' }),
    ),
  },
  { additionalProperties: false },
);
export type CancelPaymentBody = Static<typeof CancelPaymentBody>;
