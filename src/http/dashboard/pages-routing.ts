// Dashboard page of routing: the rules of this mode, the connectors they may name (with their
// circuit breakers), the window's authorisation rates (GET /v1/routing/stats) and the connector
// accounts; and the routing section of a payment's page (why it went where it went). Read-only: rules and credentials are changed
// through the API (PUT /v1/routing, /v1/connector-accounts), where they are versioned and audited.
import type { App } from '../types.js';
import { retrieveRouting } from '../../domain/routing/service.js';
import { connectorAccountReads } from '../../domain/connector-accounts/service.js';
import { strategyOf } from '../../connectors/router.js';
import { routingStatsView } from '../../domain/routing/stats.js';
import type { PaymentView } from '../../domain/payments/schema.js';
import { viewOf, type DashboardDeps } from './act.js';
import { code, facts, html, money, sendView, status, table, when } from './layout.js';

export function registerRoutingPages(app: App, deps: DashboardDeps) {
  const { db, rt } = deps;
  const accounts = connectorAccountReads(rt);

  app.get('/dashboard/routing', async (req, reply) => {
    const [routing, connectorAccounts, stats] = await Promise.all([retrieveRouting(db, rt, req.ctx), accounts.list(db, req.ctx, { limit: 100 }), routingStatsView(db, rt, req.ctx)]);
    const amounts = (rule: (typeof routing.rules)[number]) => {
      const currency = rule.currencies?.length === 1 ? rule.currencies[0]! : undefined;
      const show = (amount: number) => (currency ? money(amount, currency) : String(amount));
      if (rule.amount_min === undefined && rule.amount_max === undefined) return 'any';
      return `${rule.amount_min === undefined ? '' : show(rule.amount_min)} … ${rule.amount_max === undefined ? '' : show(rule.amount_max)}`;
    };
    const rules = table(routing.rules, [
      { label: 'Rule', cell: (r) => r.name ?? '' },
      { label: 'Currencies', cell: (r) => r.currencies?.join(' ') ?? 'any' },
      { label: 'Amount', cell: (r) => amounts(r) },
      { label: 'Methods', cell: (r) => r.payment_method_types?.join(' ') ?? 'payments and payouts' },
      { label: 'Strategy', cell: (r) => strategyOf(r) },
      { label: 'Connectors, in order', cell: (r) => r.connectors.map((c) => `${c.name ?? c.connector_account ?? ''}${c.weight === undefined ? '' : ` (weight ${c.weight})`}`).join(' → '), wrap: true },
    ], 'No rules: the default route applies.');
    const connectors = table(routing.connectors, [
      { label: 'Name', cell: (c) => c.name },
      { label: 'Processor', cell: (c) => c.connector },
      { label: 'Connector account', cell: (c) => (c.connector_account ? code(c.connector_account) : 'built in') },
      { label: 'Circuit', cell: (c) => status(c.circuit) },
    ]);
    const rates = table(stats.data, [
      { label: 'Connector', cell: (r) => r.connector },
      { label: 'Card brand', cell: (r) => r.card_brand ?? '' },
      { label: 'Currency', cell: (r) => r.currency },
      { label: 'Issuing country', cell: (r) => r.issuing_country ?? 'unknown' },
      { label: 'Attempts', cell: (r) => String(r.attempts) },
      { label: 'Authorised', cell: (r) => `${r.authorized} (${(r.authorization_rate * 100).toFixed(1)}%)` },
    ], 'No outcomes in the window.');
    const accountRows = table(connectorAccounts.data, [
      { label: 'Account', cell: (a) => code(a.id) },
      { label: 'Name', cell: (a) => a.name },
      { label: 'Processor', cell: (a) => a.connector },
      { label: 'Status', cell: (a) => status(a.status) },
      { label: 'Credentials', cell: (a) => Object.entries(a.credentials).map(([field, hint]) => `${field}: ${hint.set ? `set ·${hint.last4 ?? ''}` : 'not set'}`).join(', '), wrap: true },
      { label: 'Webhook URL', cell: (a) => code(a.webhook_url), wrap: true },
      { label: 'Created', cell: (a) => when(a.created_at) },
    ], 'No connector accounts in this mode.');
    const body = html`${facts([
      ['Rules', routing.is_default ? 'the default route (no rules of your own yet)' : `version ${routing.version}`],
      ['Updated', routing.updated_at ? when(routing.updated_at) : null],
    ])}<h2>Rules</h2>${rules}<h2>Connectors rules may name</h2>${connectors}<h2>Authorisation rates since ${when(stats.window.since)}</h2>${rates}<h2>Connector accounts</h2>${accountRows}
<p>Rules and connector accounts are changed through the API: <code>PUT /v1/routing</code> and <code>/v1/connector-accounts</code>.</p>`;
    return sendView(reply, viewOf(req), 'Routing', body, { current: '/dashboard/routing' });
  });
}

/** A payment page's routing section: the rule, its strategy, each candidate's score or why it was skipped, and the connector chosen. */
export function routingSection(routing: PaymentView['routing']) {
  if (routing === null) return html`<h2>Routing</h2><p>Not recorded (the payment predates routing explanations).</p>`;
  return html`<h2>Routing</h2>${facts([
    ['Rule', routing.rule],
    ['Strategy', routing.strategy],
    ['Chosen', routing.chosen],
  ])}${table(routing.candidates, [
    { label: 'Candidate', cell: (c) => c.connector },
    { label: 'Score', cell: (c) => (c.score === undefined ? '' : c.score.toFixed(4)) },
    { label: 'Skipped', cell: (c) => c.skipped ?? '' },
  ], 'No candidates.')}`;
}
