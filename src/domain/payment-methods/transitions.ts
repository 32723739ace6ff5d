// A card verification's states as the engine applies them (src/movement/report.ts): the payment
// method is the movement's row, pending while the zero-amount authorisation is at the processor.
// Becoming active announces it (payment_method.attached); a failure, or a wait for the customer,
// announces nothing: a declined card saves nothing usable.
import type { ReportRules } from '../../movement/report.js';
import { unbookedFailure } from '../../movement/kind.js';
import { eraseRecord } from '../../vault/vault.js';
import { paymentMethods } from '../../storage/schema.js';
import { paymentMethodView, type PaymentMethodRow } from './service.js';
import { paymentMethodStates, type PaymentMethodStatus } from './state.js';
import type { VerificationUpdate } from '../../connectors/movements/verification.js';

export type { VerificationUpdate };

export const ABANDONED_VERIFICATION: VerificationUpdate = {
  kind: 'failed',
  connector: null,
  connectorReference: null,
  failureCode: 'processing_error',
  failureMessage: 'The request that saved the card ended before any connector verified it; save the card again.',
};

/** A verification sent without an answer whose processor still has no record of it once overdue. */
export const unbookedVerification = (connector: string): VerificationUpdate => unbookedFailure(connector, 'the verification', 'verified');

export const VERIFICATION_RULES: ReportRules<PaymentMethodRow, PaymentMethodStatus, 'payment_method', 'changeable' | 'verifying', VerificationUpdate> = {
  object: 'payment_method',
  table: paymentMethods,
  states: paymentMethodStates,
  view: paymentMethodView,
  events: { active: 'payment_method.attached', requires_action: null, failed: null },
  open: 'verifying',
  working: 'pending',
  firstWhen: 'no_connector',
  acceptanceEvent: false,
  check: 'nextStatusCheckAt',
  settle: (_row, update) => ({
    update,
    set:
      update.kind === 'active'
        ? { networkTransactionId: update.networkTransactionId, nextAction: null }
        : update.kind === 'requires_action'
          ? { nextAction: update.action }
          : update.kind === 'failed'
            ? { nextAction: null, vaultRecordId: null }
            : undefined,
  }),
  // A refused card is erased with the verification's failure, however it was learnt (the request,
  // the customer's return from 3-D Secure, the worker's check): nothing unusable stays sealed.
  effects: {
    async failed(tx, _ctx, row, _now, before) {
      if (before.vaultRecordId) await eraseRecord(tx, row, before.vaultRecordId);
    },
  },
};
