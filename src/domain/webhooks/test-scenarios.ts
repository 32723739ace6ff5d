// Test-mode delivery scenarios (POST /v1/test-helpers/webhook-endpoints/{id}/send): synthetic
// `webhook_endpoint.test` events sent straight to one endpoint, shaped to prove that a receiver
// verifies signatures, refuses stale timestamps, deduplicates by webhook-id and orders by version.
// They are sent from the API process while the request waits (at most two requests of at most
// WEBHOOK_TIMEOUT_MS each), are not stored as events and do not go through the delivery queue.
import crypto from 'node:crypto';
import type { Db } from '../../storage/db.js';
import { newId } from '../../kernel/ids.js';
import { ApiError } from '../../kernel/errors.js';
import { respond } from '../../idempotency/store.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import type { EventView } from '../events/service.js';
import { signedHeaders, SECRET_PREFIX } from '../../webhooks/signing.js';
import { loadOne } from '../../kernel/tenant.js';
import { isGuarded } from './destinations.js';
import { signingSecrets, WEBHOOK_ENDPOINTS, type WebhookSettings } from './service.js';
import type { WebhookTestScenario } from './state.js';

/** Older than the five minutes the Standard Webhooks libraries tolerate. */
export const STALE_TIMESTAMP_AGE_S = 10 * 60;

const DESCRIPTIONS: Record<WebhookTestScenario, string> = {
  deliver: 'One correctly signed event; a receiver should verify it and answer 2xx.',
  duplicate: 'The same event (same webhook-id) twice; a receiver should answer 2xx to both and act once.',
  out_of_order: 'Version 2 of an object, then version 1; a receiver should answer 2xx to both and keep version 2.',
  invalid_signature: 'A request signed with a secret that is not the endpoint\'s; a receiver should refuse it (4xx).',
  stale_timestamp: `A correctly signed request whose webhook-timestamp is ${STALE_TIMESTAMP_AGE_S / 60} minutes old; a receiver should refuse it (4xx).`,
};

interface Planned {
  event: EventView;
  timestampS: number;
  forged: boolean;
  expected: 'accept' | 'reject';
}

function plan(scenario: WebhookTestScenario, ctx: RequestContext, now: Date): Planned[] {
  const objectId = newId('wht').id;
  const event = (version: number): EventView => ({
    id: newId('evt').id,
    object: 'event',
    type: 'webhook_endpoint.test',
    livemode: false,
    created_at: now.toISOString(),
    data: { object: { id: objectId, object: 'webhook_test', scenario, version } },
    request: { id: ctx.requestId, idempotency_key: ctx.idempotency?.key ?? null },
  });
  const nowS = Math.floor(now.getTime() / 1000);
  const ok = (e: EventView): Planned => ({ event: e, timestampS: nowS, forged: false, expected: 'accept' });
  switch (scenario) {
    case 'deliver':
      return [ok(event(1))];
    case 'duplicate': {
      const once = event(1);
      return [ok(once), ok(once)];
    }
    case 'out_of_order': {
      const older = event(1);
      const newer = event(2);
      return [ok(newer), ok(older)];
    }
    case 'invalid_signature':
      return [{ event: event(1), timestampS: nowS, forged: true, expected: 'reject' }];
    case 'stale_timestamp':
      return [{ event: event(1), timestampS: nowS - STALE_TIMESTAMP_AGE_S, forged: false, expected: 'reject' }];
  }
}

export async function sendTestScenario(
  db: Db,
  settings: WebhookSettings,
  ctx: RequestContext,
  id: string,
  scenario: WebhookTestScenario,
  now = new Date(),
): Promise<Outcome> {
  if (ctx.livemode) throw new ApiError('permission_denied', { message: 'Test helpers can be used only with test-mode keys.' });
  const endpoint = await loadOne(db, ctx, WEBHOOK_ENDPOINTS, id);
  const secrets = signingSecrets(settings.encryptor, endpoint, now);
  const requests = [];
  for (const planned of plan(scenario, ctx, now)) {
    const body = JSON.stringify(planned.event);
    const keys = planned.forged ? [SECRET_PREFIX + crypto.randomBytes(32).toString('base64')] : secrets;
    const result = await settings.sender.send({
      url: endpoint.url,
      headers: { ...signedHeaders(keys, planned.event.id, planned.timestampS, body) },
      body,
      timeoutMs: settings.config.timeoutMs,
      guarded: isGuarded(false, settings.config),
    });
    requests.push({
      webhook_id: planned.event.id,
      webhook_timestamp: planned.timestampS,
      event_type: planned.event.type,
      object_version: planned.event.data.object.version as number,
      signature_valid: !planned.forged,
      expected: planned.expected,
      response_status: result.statusCode,
      error: result.errorCode ? { code: result.errorCode, message: result.errorMessage ?? '' } : null,
      duration_ms: result.durationMs,
    });
  }
  const passed = requests.every((r) =>
    r.response_status === null ? false : r.expected === 'accept' ? r.response_status >= 200 && r.response_status < 300 : r.response_status >= 400,
  );
  const payload = {
    object: 'webhook_test',
    scenario,
    webhook_endpoint: id,
    passed,
    requests,
    description: DESCRIPTIONS[scenario],
  };
  return db.transaction((tx) => respond(tx, ctx, 200, payload));
}
