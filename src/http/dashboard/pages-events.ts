// Dashboard pages of events and webhooks: the event log with each event's delivery attempts
// (status, response code, duration, next retry) and a resend; webhook endpoints with their
// attempts, created, disabled or enabled, their secret rotated, and in test mode the delivery
// scenarios run against them. A new or rotated secret is shown once, on the answer page itself.
import type { App } from '../types.js';
import { listEvents, retrieveEvent } from '../../events/service.js';
import { listEndpointAttempts, listEventAttempts, redeliverEvent } from '../../domain/webhooks/attempts.js';
import { createWebhookEndpoint, listWebhookEndpoints, retrieveWebhookEndpoint, rotateWebhookSecret, updateWebhookEndpoint } from '../../domain/webhooks/service.js';
import { sendTestScenario } from '../../domain/webhooks/test-scenarios.js';
import { CreateWebhookEndpointBody, RedeliverBody, SendTestBody, UpdateWebhookEndpointBody, type WebhookDeliveryAttemptView, type WebhookEndpointView } from '../../domain/webhooks/schema.js';
import { WEBHOOK_TEST_SCENARIOS, type WebhookTestScenario } from '../../domain/webhooks/state.js';
import { EVENT_TYPE_NAMES } from '../../events/types.js';
import { act, checked, filled, formKey, viewOf, type DashboardDeps } from './act.js';
import { formOf } from './session.js';
import { code, facts, idLink, getForm, html, json, link, noticeOf, pager, postForm, sendView, status, table, when, type Html, type View } from './layout.js';

const NOTICES: Record<string, string> = {
  redelivered: 'Queued again: the worker sends it within seconds (same webhook-id). Reload to see the new attempt.',
  disabled: 'The endpoint is disabled: nothing more is sent to it until it is enabled.',
  enabled: 'The endpoint is enabled again.',
};

function attemptsTable(attempts: WebhookDeliveryAttemptView[], showEvent: boolean): Html {
  return table(attempts, [
    { label: 'When', cell: (a) => when(a.created_at) },
    ...(showEvent
      ? [{ label: 'Event', cell: (a: WebhookDeliveryAttemptView) => html`${idLink(`/dashboard/events/${a.event}`, a.event)} ${code(a.event_type)}` }]
      : [{ label: 'Endpoint', cell: (a: WebhookDeliveryAttemptView) => idLink(`/dashboard/webhook-endpoints/${a.webhook_endpoint}`, a.webhook_endpoint) }]),
    { label: 'Attempt', cell: (a) => `#${a.attempt}${a.trigger === 'redeliver' ? ' (resent)' : ''}` },
    { label: 'Status', cell: (a) => status(a.outcome) },
    { label: 'Response', cell: (a) => (a.response_status === null ? '—' : String(a.response_status)) },
    { label: 'Error', cell: (a) => (a.error ? `${a.error.code}: ${a.error.message}` : ''), wrap: true },
    { label: 'Duration', cell: (a) => `${a.duration_ms} ms` },
    { label: 'Next retry', cell: (a) => (a.next_retry_at ? when(a.next_retry_at) : '—') },
  ], 'No delivery attempts yet (the worker sends new events within seconds; only subscribed, enabled endpoints get them).');
}

function secretShown(secret: string): Html {
  return html`<div class="secret" role="status"><p>The signing secret, shown this once — store it now:</p><p>${code(secret)}</p></div>`;
}

export function registerEventPages(app: App, deps: DashboardDeps) {
  const { db, webhooks } = deps;

  app.get('/dashboard/events', async (req, reply) => {
    const query = filled(req.query);
    const type = query.type && /^[a-z_.*]{1,100}$/.test(query.type) ? query.type : undefined;
    const page = await req.read((from) => listEvents(from, req.ctx, { limit: 50, type, starting_after: query.starting_after, ending_before: query.ending_before }));
    const filters = getForm('/dashboard/events', [{ name: 'type', label: 'Type (payment.* matches all payment events)', value: query.type, placeholder: 'refund.*' }], 'Filter');
    const rows = table(page.data, [
      { label: 'When', cell: (e) => when(e.created_at) },
      { label: 'Event', cell: (e) => link(`/dashboard/events/${e.id}`, e.id) },
      { label: 'Type', cell: (e) => code(e.type) },
      { label: 'Object', cell: (e) => code(e.data.object.id) },
    ], 'No events match.');
    return sendView(reply, viewOf(req), 'Events', html`${filters}${rows}${pager('/dashboard/events', query, page)}`, { current: '/dashboard/events' });
  });

  app.get('/dashboard/events/:id', async (req, reply) => {
    const { id } = req.params as { id: string };
    const view = viewOf(req);
    const event = await retrieveEvent(db, req.ctx, id);
    const [attempts, endpoints] = await Promise.all([
      listEventAttempts(db, req.ctx, id, { limit: 100 }),
      listWebhookEndpoints(db, req.ctx, { status: 'enabled', limit: 100 }),
    ]);
    const resend = endpoints.data.length
      ? postForm(`/dashboard/events/${event.id}/redeliver`, view.csrf, [
          { hidden: 'idem', value: formKey() },
          { name: 'webhook_endpoint', label: 'Resend to', value: 'every subscribed endpoint', options: ['every subscribed endpoint', ...endpoints.data.map((e) => e.id)] },
        ], 'Resend')
      : html`<p class="empty">No enabled endpoint to resend to.</p>`;
    const body = html`${facts([
      ['Id (webhook-id)', code(event.id)],
      ['Type', code(event.type)],
      ['Created', when(event.created_at)],
      ['Object', code(event.data.object.id)],
      ['Request', event.request.id],
      ['Idempotency key', event.request.idempotency_key],
    ])}<h2>Deliveries</h2>${attemptsTable(attempts.data, false)}${resend}<h2>Payload</h2>${json(event)}`;
    return sendView(reply, view, `Event ${event.type}`, body, { notice: noticeOf(req, NOTICES), current: '/dashboard/events' });
  });

  app.post('/dashboard/events/:id/redeliver', async (req, reply) => {
    const { id } = req.params as { id: string };
    const form = formOf(req.body);
    const target = form.webhook_endpoint?.startsWith('we_') ? form.webhook_endpoint : undefined;
    const input = checked<RedeliverBody>(RedeliverBody, target ? { webhook_endpoint: target } : {});
    await act(deps, req, form.idem, input, () => redeliverEvent(db, req.ctx, id, input));
    return reply.redirect(`/dashboard/events/${id}?notice=redelivered`, 303);
  });

  app.get('/dashboard/webhook-endpoints', async (req, reply) => {
    const view = viewOf(req);
    const page = await req.read((from) => listWebhookEndpoints(from, req.ctx, { limit: 100 }));
    return sendView(reply, view, 'Webhook endpoints', endpointsPage(view, page.data), { current: '/dashboard/webhook-endpoints' });
  });

  app.post('/dashboard/webhook-endpoints', async (req, reply) => {
    const view = viewOf(req);
    const form = formOf(req.body);
    const events = (form.enabled_events ?? '').split(/[\s,]+/).filter(Boolean);
    const input = checked<CreateWebhookEndpointBody>(CreateWebhookEndpointBody, {
      url: form.url ?? '',
      enabled_events: events.length ? events : ['*'],
      ...(form.description ? { description: form.description } : {}),
    });
    const endpoint = await act<WebhookEndpointView & { secret: string }>(deps, req, form.idem, input, () => createWebhookEndpoint(db, webhooks, req.ctx, input));
    const body = html`${secretShown(endpoint.secret)}<p>${link(`/dashboard/webhook-endpoints/${endpoint.id}`, `Open ${endpoint.id}`)}</p>`;
    return sendView(reply, view, 'Webhook endpoint created', body, { status: 201, current: '/dashboard/webhook-endpoints' });
  });

  app.get('/dashboard/webhook-endpoints/:id', async (req, reply) => {
    const { id } = req.params as { id: string };
    const view = viewOf(req);
    const query = filled(req.query);
    const endpoint = await retrieveWebhookEndpoint(db, req.ctx, id);
    const attempts = await listEndpointAttempts(db, req.ctx, id, { limit: 25, starting_after: query.starting_after, ending_before: query.ending_before });
    const body = html`${endpointFacts(endpoint)}<h2>Actions</h2>${endpointActions(view, endpoint)}
<h2>Delivery attempts</h2>${attemptsTable(attempts.data, true)}${pager(`/dashboard/webhook-endpoints/${id}`, query, attempts)}`;
    return sendView(reply, view, `Webhook endpoint`, body, { notice: noticeOf(req, NOTICES), current: '/dashboard/webhook-endpoints' });
  });

  app.post('/dashboard/webhook-endpoints/:id/status', async (req, reply) => {
    const { id } = req.params as { id: string };
    const form = formOf(req.body);
    const input = checked<UpdateWebhookEndpointBody>(UpdateWebhookEndpointBody, { status: form.status });
    await act(deps, req, form.idem, input, () => updateWebhookEndpoint(db, webhooks, req.ctx, id, input));
    return reply.redirect(`/dashboard/webhook-endpoints/${id}?notice=${input.status}`, 303);
  });

  app.post('/dashboard/webhook-endpoints/:id/rotate-secret', async (req, reply) => {
    const { id } = req.params as { id: string };
    const view = viewOf(req);
    const form = formOf(req.body);
    const endpoint = await act<WebhookEndpointView & { secret: string }>(deps, req, form.idem, {}, () => rotateWebhookSecret(db, webhooks, req.ctx, id, {}));
    const body = html`${secretShown(endpoint.secret)}<p>The previous secret keeps signing beside it until ${when(endpoint.previous_secret_expires_at)}.</p>
<p>${link(`/dashboard/webhook-endpoints/${endpoint.id}`, `Back to ${endpoint.id}`)}</p>`;
    return sendView(reply, view, 'Signing secret rotated', body, { current: '/dashboard/webhook-endpoints' });
  });

  app.post('/dashboard/webhook-endpoints/:id/test', async (req, reply) => {
    const { id } = req.params as { id: string };
    const view = viewOf(req);
    const form = formOf(req.body);
    const input = checked<SendTestBody>(SendTestBody, { scenario: form.scenario });
    const result = await act<Record<string, unknown> & { passed: boolean | null; receiver_should: string; requests: Record<string, unknown>[] }>(
      deps, req, form.idem, input, () => sendTestScenario(db, webhooks, req.ctx, id, input.scenario as WebhookTestScenario),
    );
    const verdict = result.passed === true ? 'passed' : result.passed === false ? 'failed' : 'answers as expected; check your records';
    const body = html`${facts([['Scenario', code(input.scenario)], ['Result', status(verdict)], ['A correct receiver', result.receiver_should]])}
<h2>Requests sent</h2>${table(result.requests, [
      { label: 'webhook-id', cell: (r) => code(r.webhook_id) },
      { label: 'Signature', cell: (r) => (r.signature_valid ? 'valid' : 'invalid') },
      { label: 'Expected', cell: (r) => String(r.expected) },
      { label: 'Response', cell: (r) => (r.response_status === null ? '—' : String(r.response_status)) },
      { label: 'Duration', cell: (r) => `${String(r.duration_ms)} ms` },
    ])}<p>${link(`/dashboard/webhook-endpoints/${id}`, 'Back to the endpoint')}</p>`;
    return sendView(reply, view, `Test scenario: ${input.scenario}`, body, { current: '/dashboard/webhook-endpoints' });
  });
}

function endpointFacts(endpoint: WebhookEndpointView): Html {
  return facts([
    ['Id', code(endpoint.id)],
    ['URL', code(endpoint.url)],
    ['Status', html`${status(endpoint.status)}${endpoint.disabled_reason ? ` (${endpoint.disabled_reason})` : ''}`],
    ['Events', code(endpoint.enabled_events.join(', '))],
    ['Description', endpoint.description],
    ['Previous secret signs until', endpoint.previous_secret_expires_at ? when(endpoint.previous_secret_expires_at) : null],
    ['Created', when(endpoint.created_at)],
  ]);
}

function endpointActions(view: View, endpoint: WebhookEndpointView): Html {
  const path = `/dashboard/webhook-endpoints/${endpoint.id}`;
  const toggle = endpoint.status === 'enabled'
    ? postForm(`${path}/status`, view.csrf, [{ hidden: 'idem', value: formKey() }, { hidden: 'status', value: 'disabled' }], 'Disable', 'danger')
    : postForm(`${path}/status`, view.csrf, [{ hidden: 'idem', value: formKey() }, { hidden: 'status', value: 'enabled' }], 'Enable');
  const rotate = postForm(`${path}/rotate-secret`, view.csrf, [{ hidden: 'idem', value: formKey() }], 'Rotate signing secret');
  const test = view.livemode
    ? ''
    : postForm(`${path}/test`, view.csrf, [
        { hidden: 'idem', value: formKey() },
        { name: 'scenario', label: 'Test scenario', value: 'deliver', options: [...WEBHOOK_TEST_SCENARIOS] },
      ], 'Run');
  return html`<div class="actions">${toggle}${rotate}${test}</div>`;
}

function endpointsPage(view: View, endpoints: WebhookEndpointView[]): Html {
  const rows = table(endpoints, [
    { label: 'Endpoint', cell: (e) => link(`/dashboard/webhook-endpoints/${e.id}`, e.id) },
    { label: 'URL', cell: (e) => code(e.url), wrap: true },
    { label: 'Status', cell: (e) => status(e.status) },
    { label: 'Events', cell: (e) => code(e.enabled_events.join(', ')), wrap: true },
    { label: 'Created', cell: (e) => when(e.created_at) },
  ], 'No webhook endpoints yet.');
  const create = postForm('/dashboard/webhook-endpoints', view.csrf, [
    { hidden: 'idem', value: formKey() },
    { name: 'url', label: 'URL', type: 'url', required: true, placeholder: 'https://example.com/webhooks' },
    { name: 'enabled_events', label: 'Events (space-separated; * for all)', value: '*', placeholder: EVENT_TYPE_NAMES[0] },
    { name: 'description', label: 'Description' },
  ], 'Create endpoint');
  return html`${rows}<h2>New endpoint</h2>${create}`;
}
