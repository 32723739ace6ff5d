// Every kind of money movement, by the object name processors report on, and how their dispute
// reports apply: what the inbound webhook route hands to the movement core (src/movement/inbound.ts).
import type { KindsByObject } from '../movement/inbound.js';
import { captureKind } from './captures/kind.js';
import { mandateKind } from './mandates/kind.js';
import { verificationKind } from './payment-methods/kind.js';
import { paymentKind } from './payments/kind.js';
import { payoutKind } from './payouts/kind.js';
import { refundKind } from './refunds/kind.js';
import { applyDisputeReport } from './disputes/report.js';
import { recordUnmatchedDispute } from './disputes/unmatched.js';
import { voidKind } from './voids/kind.js';

export const MOVEMENT_KINDS: KindsByObject = {
  payment: paymentKind,
  refund: refundKind,
  payout: payoutKind,
  mandate: mandateKind,
  capture: captureKind,
  payment_method: verificationKind,
  void: voidKind,
  dispute: applyDisputeReport,
  unmatchedDispute: (db, sender, event, now) => recordUnmatchedDispute(db, sender, event, now),
};
