// The connector contract for manual capture (test/connectors/contract/captures.ts) over every
// capture harness (test/connectors/contract/capture-harnesses.ts): the simulated processor, Stripe
// and Adyen against their fakes.
import { CAPTURE_HARNESSES } from './contract/capture-harnesses.js';
import { describeCaptureContract } from './contract/captures.js';

for (const make of CAPTURE_HARNESSES) describeCaptureContract(make());
