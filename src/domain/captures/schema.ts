// The capture object (cap_…) as the API shows it: one capture of a manual payment's authorisation.
import { Type, type Static } from 'typebox';
import { Amount, IdFilter, ListQuery, Metadata, MetadataView, OneOf, Versioned } from '../../kernel/schemas.js';
import { CAPTURE_FAILURE_CODES } from '../../connectors/types.js';
import { CAPTURE_STATUSES } from './state.js';

export const Capture = Type.Object(
  {
    id: Type.String({ examples: ['cap_01jd8x3v0pe7wbz0m4k6f2n9qa'] }),
    object: Type.Literal('capture'),
    livemode: Type.Boolean(),
    status: Type.String({ enum: [...CAPTURE_STATUSES] }),
    amount: Amount,
    currency: Type.String(),
    payment: Type.String(),
    final_capture: Type.Boolean({ description: 'The last capture of the authorisation: the processor released what it still held.' }),
    connector: Type.String(),
    connector_reference: Type.Union([Type.String(), Type.Null()]),
    failure_code: Type.Union([Type.String({ enum: [...CAPTURE_FAILURE_CODES] }), Type.Null()]),
    failure_message: Type.Union([Type.String(), Type.Null()]),
    metadata: MetadataView,
    ...Versioned(),
  },
  { $id: 'Capture', title: 'Capture' },
);
export type CaptureView = Static<typeof Capture>;

export const CapturePaymentBody = Type.Object(
  {
    amount: Type.Optional(Type.Integer({ minimum: 1, description: 'What to capture, in minor units; default: all the authorisation still holds (amount_capturable).' })),
    final_capture: Type.Optional(
      Type.Boolean({ description: 'The last capture (default): the processor releases what the authorisation still holds. false leaves the rest for later captures, where the connector takes several (multiple_captures).' }),
    ),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);
export type CapturePaymentBody = Static<typeof CapturePaymentBody>;

export const ListCapturesQuery = ListQuery({ status: OneOf(CAPTURE_STATUSES), payment: IdFilter });
export type ListCapturesQuery = Static<typeof ListCapturesQuery>;

export const ResolveCaptureBody = Type.Object(
  { outcome: Type.String({ enum: ['succeeded', 'failed'], description: 'How the simulated processor settles the pending capture: confirmed, or refused (capture_declined).' }) },
  { additionalProperties: false },
);
export type ResolveCaptureBody = Static<typeof ResolveCaptureBody>;
