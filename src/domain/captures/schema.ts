// The capture object (cap_…) as the API shows it: one capture of a manual payment's authorisation.
import { Type, type Static } from 'typebox';
import { Amount, MetadataView, Versioned } from '../../kernel/schemas.js';
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
