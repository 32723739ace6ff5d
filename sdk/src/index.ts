// @payment-orchestrator/sdk: a typed client of the payment orchestration API and the verification
// of the webhooks it sends.
export { createClient, type ClientOptions, type ListItem, type ListPath, type PaymentClient } from './client.js';
export { PaymentApiError, type ApiErrorBody, type ErrorCode, type ErrorType } from './errors.js';
export { verify, WebhookVerificationError, WEBHOOK_TOLERANCE_S, type Event, type EventOf, type EventType, type VerifyOptions, type WebhookHeaders } from './webhooks.js';
export type { components, paths } from './openapi.js';

import { verify } from './webhooks.js';
/** `webhooks.verify(payload, headers, secret)`, as the integrators call it. */
export const webhooks = { verify };
