// Test-mode delivery scenarios (POST /v1/test-helpers/webhook-endpoints/{id}/send): synthetic
// `webhook_endpoint.test` events sent straight to one endpoint, shaped to exercise how a receiver
// verifies signatures, refuses stale timestamps, deduplicates by webhook-id and orders by version.
// Only the first two show in its answers; the others are reported with what the receiver must do.
// They are sent from the API process while the request waits (at most two requests of at most
// WEBHOOK_TIMEOUT_MS each), are not stored as events and do not go through the delivery queue.
import crypto from 'node:crypto';
import type { Db } from '../../storage/db.js';
import { newId } from '../../kernel/ids.js';
import { ApiError } from '../../kernel/errors.js';
import { respond } from '../../idempotency/store.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import type { EventView } from '../../events/service.js';
import { signedHeaders, SECRET_PREFIX } from './signing.js';
import { loadOne } from '../../storage/tenant.js';
import { isGuarded } from './destinations.js';
import { recordEvidence } from '../accounts/integration.js';
import { signingSecrets, WEBHOOK_ENDPOINTS, type WebhookSettings } from './service.js';
import type { WebhookTestScenario } from './state.js';

/** Older than the five minutes the Standard Webhooks libraries tolerate. */
export const STALE_TIMESTAMP_AGE_S = 10 * 60;

interface Scenario {
  /** What is sent. */
  sent: string;
  /** What a correct receiver does with it, naming this run's ids. */
  receiverShould(ids: { eventId: string; objectId: string }): string;
  /**
   * Whether the answers show all of it. Acting once on a duplicate, or keeping the newer version,
   * happens inside the receiver: a 2xx says only that it took the requests.
   */
  answersShowAll: boolean;
}

const SCENARIOS: Record<WebhookTestScenario, Scenario> = {
  deliver: { sent: 'One correctly signed event.', receiverShould: () => 'Verify the signature and answer 2xx.', answersShowAll: true },
  duplicate: {
    sent: 'The same event (same webhook-id, same body) twice.',
    receiverShould: ({ eventId }) => `Answer 2xx to both requests and act on ${eventId} once: the second is a retry, deduplicate by webhook-id.`,
    answersShowAll: false,
  },
  out_of_order: {
    sent: 'Version 2 of an object, then version 1 of the same object (two webhook-ids).',
    receiverShould: ({ objectId }) =>
      `Answer 2xx to both requests and keep version 2 of ${objectId}: version 1 arrived last but is older; order updates by data.object.version, not by arrival.`,
    answersShowAll: false,
  },
  invalid_signature: {
    sent: "One event signed with a secret that is not the endpoint's.",
    receiverShould: () => 'Refuse it (4xx): the signature does not verify with the endpoint\'s secret.',
    answersShowAll: true,
  },
  stale_timestamp: {
    sent: `One correctly signed event whose webhook-timestamp is ${STALE_TIMESTAMP_AGE_S / 60} minutes old.`,
    receiverShould: () => 'Refuse it (4xx): a timestamp more than five minutes away may be a replay.',
    answersShowAll: true,
  },
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
  const planned = plan(scenario, ctx, now);
  for (const request of planned) {
    const body = JSON.stringify(request.event);
    const keys = request.forged ? [SECRET_PREFIX + crypto.randomBytes(32).toString('base64')] : secrets;
    const result = await settings.sender.send({
      url: endpoint.url,
      headers: { ...signedHeaders(keys, request.event.id, request.timestampS, body) },
      body,
      timeoutMs: settings.config.timeoutMs,
      guarded: isGuarded(false, settings.config),
    });
    requests.push({
      webhook_id: request.event.id,
      webhook_timestamp: request.timestampS,
      event_type: request.event.type,
      object_version: request.event.data.object.version as number,
      signature_valid: !request.forged,
      expected: request.expected,
      response_status: result.statusCode,
      error: result.errorCode ? { code: result.errorCode, message: result.errorMessage ?? '' } : null,
      duration_ms: result.durationMs,
    });
  }
  const answersAsExpected = requests.every((r) =>
    r.response_status === null ? false : r.expected === 'accept' ? r.response_status >= 200 && r.response_status < 300 : r.response_status >= 400,
  );
  const run = SCENARIOS[scenario];
  const first = planned[0]!.event;
  const payload = {
    object: 'webhook_test',
    scenario,
    webhook_endpoint: id,
    // Never true on answers alone when the answers cannot show what the scenario is about.
    passed: answersAsExpected ? (run.answersShowAll ? true : null) : false,
    answers_as_expected: answersAsExpected,
    receiver_should: run.receiverShould({ eventId: first.id, objectId: first.data.object.id as string }),
    requests,
    description: run.sent,
  };
  return db.transaction(async (tx) => {
    // A receiver that answered as it should has shown the implementation plan this scenario.
    if (answersAsExpected) await recordEvidence(tx, ctx.accountId, `webhook_scenario_${scenario}`, id);
    return respond(tx, ctx, 200, payload);
  });
}
