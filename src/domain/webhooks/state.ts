import { defineStateMachine } from '../../kernel/state-machine.js';

export const WEBHOOK_ENDPOINT_STATUSES = ['enabled', 'disabled'] as const;
export type WebhookEndpointStatus = (typeof WEBHOOK_ENDPOINT_STATUSES)[number];

/** Why a disabled endpoint is disabled: asked for through the API, answered 410 Gone, failing for days. */
export type DisabledReason = 'requested' | 'gone' | 'failing';

export const webhookEndpointStates = defineStateMachine<WebhookEndpointStatus, 'delivering'>(
  'webhook endpoint',
  {
    enabled: ['disabled'],
    disabled: ['enabled'],
  },
  // What events are delivered to (and may be redelivered to).
  { delivering: ['enabled'] },
);

export const WEBHOOK_TEST_SCENARIOS = ['deliver', 'duplicate', 'out_of_order', 'invalid_signature', 'stale_timestamp'] as const;
export type WebhookTestScenario = (typeof WEBHOOK_TEST_SCENARIOS)[number];
