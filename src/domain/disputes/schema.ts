// The dispute object (dp_…) as the API shows it: a cardholder's chargeback of a payment.
import { Type, type Static } from 'typebox';
import { Amount, IdFilter, ListQuery, MetadataView, OneOf, Versioned } from '../../kernel/schemas.js';
import { DISPUTE_REASONS } from '../../connectors/disputes.js';
import { DISPUTE_STATUSES } from './state.js';

/** The text evidence the API takes, named as Stripe's text evidence fields. */
export const EVIDENCE_FIELDS = [
  'product_description',
  'customer_email_address',
  'shipping_carrier',
  'shipping_tracking_number',
  'refund_policy_disclosure',
  'refund_refusal_explanation',
  'uncategorized_text',
] as const;
export type EvidenceField = (typeof EVIDENCE_FIELDS)[number];

const evidenceText = (description: string) => Type.String({ maxLength: 20000, description });

export const DisputeEvidence = Type.Object(
  {
    product_description: Type.Optional(evidenceText('What was sold: the product or service, as the customer bought it.')),
    customer_email_address: Type.Optional(Type.String({ maxLength: 320, description: "The customer's email address." })),
    shipping_carrier: Type.Optional(Type.String({ maxLength: 200, description: 'Who delivered the goods.' })),
    shipping_tracking_number: Type.Optional(Type.String({ maxLength: 200, description: "The carrier's tracking number." })),
    refund_policy_disclosure: Type.Optional(evidenceText('How and when the customer was shown the refund policy.')),
    refund_refusal_explanation: Type.Optional(evidenceText('Why the customer is not entitled to a refund.')),
    uncategorized_text: Type.Optional(evidenceText('Anything else in favour of the merchant.')),
  },
  { additionalProperties: false, description: 'Text evidence, by field; a field saved again replaces the earlier text.' },
);
export type DisputeEvidence = Static<typeof DisputeEvidence>;

export const Dispute = Type.Object(
  {
    id: Type.String({ examples: ['dp_01jd8x3v0pe7wbz0m4k6f2n9qa'] }),
    object: Type.Literal('dispute'),
    livemode: Type.Boolean(),
    status: Type.String({ enum: [...DISPUTE_STATUSES] }),
    amount: Amount,
    currency: Type.String(),
    payment: Type.String(),
    reason: Type.String({ enum: [...DISPUTE_REASONS], description: "Why the cardholder disputes the payment, mapped from the processor's reason code." }),
    processor_reason: Type.Union([Type.String(), Type.Null()], { description: "The processor's own reason code, as it sent it." }),
    evidence_due_by: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Past it, evidence is refused (dispute_evidence_closed).' }),
    evidence: DisputeEvidence,
    evidence_due_soon: Type.Boolean({ description: 'The deadline is less than three days away and no evidence was submitted (the worker said so with dispute.updated).' }),
    defense_reason: Type.Union([Type.String(), Type.Null()], { description: "Adyen's defense reason code; null: the first one Adyen says applies." }),
    funds_withdrawn: Type.Boolean({ description: 'The processor holds the disputed amount back: it, and the dispute fee, are out of the balance.' }),
    fee: Type.Integer({ description: 'The dispute fee charged when the funds were withdrawn (minor units).' }),
    connector: Type.String(),
    connector_reference: Type.String({ description: "The processor's id of the dispute." }),
    metadata: MetadataView,
    ...Versioned(),
  },
  { $id: 'Dispute', title: 'Dispute' },
);
export type DisputeView = Static<typeof Dispute>;

export const ListDisputesQuery = ListQuery({ status: OneOf(DISPUTE_STATUSES), payment: IdFilter });
export type ListDisputesQuery = Static<typeof ListDisputesQuery>;

export const DisputeEvidenceBody = Type.Object(
  {
    evidence: Type.Optional(DisputeEvidence),
    defense_reason: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_]+$', description: "Adyen's defense reason code to defend with; unset: the first one Adyen says applies. Ignored by other processors." }),
    ),
    submit: Type.Optional(Type.Boolean({ description: 'Send the evidence saved so far (with this request\'s) to the processor: the dispute goes under_review. Default false: only saved.' })),
  },
  { additionalProperties: false },
);
export type DisputeEvidenceBody = Static<typeof DisputeEvidenceBody>;
