// The merchant dashboard at /dashboard: server-rendered pages over the API's own service functions,
// scoped by the signed-in session's account and mode exactly as an API key's requests are. Not
// part of the API: its routes are hidden from the OpenAPI document and take no Bearer key.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../types.js';
import type { Config } from '../../config.js';
import type { Db } from '../../storage/db.js';
import type { Runtime } from '../../runtime.js';
import type { WebhookSettings } from '../../domain/webhooks/service.js';
import { ApiError } from '../../kernel/errors.js';
import { parseId } from '../../kernel/ids.js';
import { keyAfterError } from '../key-after-error.js';
import { listPaymentOrders } from '../../domain/payment-orders/service.js';
import { listPayouts } from '../../domain/payouts/service.js';
import { retrieveRefund } from '../../domain/refunds/service.js';
import { html, sendBare, sendView } from './layout.js';
import { HOME, registerSessionRoutes, sessionGuard } from './session.js';
import { DASHBOARD_CSS } from './style.js';
import type { DashboardDeps } from './act.js';
import { registerPaymentPages } from './pages-payments.js';
import { registerEventPages } from './pages-events.js';
import { registerMoneyPages } from './pages-money.js';
import { registerRoutingPages } from './pages-routing.js';
import { registerCustomerPages } from './pages-customers.js';
import { registerReconciliationPages } from './pages-reconciliation.js';
import { registerDisputePages } from './pages-disputes.js';

export function registerDashboard(app: App, db: Db, config: Config, rt: Runtime, webhooks: WebhookSettings) {
  const settler = keyAfterError(db, config.idempotencyLockTimeoutS);
  app.addHook('onClose', () => settler.close());
  const deps: DashboardDeps = { db, config, rt, webhooks, encryptor: rt.encryptor, settler };

  app.register(async (scope) => {
    scope.addHook('onRoute', (route) => {
      route.config = { ...route.config, auth: false };
      route.schema = { ...route.schema, hide: true };
    });
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_req, body, done) =>
      done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    scope.setErrorHandler(async (error: FastifyError | ApiError, req, reply) => renderError(error, req, reply));

    scope.get('/dashboard/assets/dashboard.css', async (_req, reply) =>
      reply.header('cache-control', 'public, max-age=3600').header('x-content-type-options', 'nosniff').type('text/css; charset=utf-8').send(DASHBOARD_CSS),
    );
    registerSessionRoutes(scope, db, config);

    await scope.register(async (signedIn) => {
      signedIn.addHook('preHandler', sessionGuard(db));
      signedIn.get('/dashboard', async (_req, reply) => reply.redirect(HOME, 303));
      signedIn.get('/dashboard/search', async (req, reply) => reply.redirect(await searchTarget(db, req, String((req.query as { q?: unknown }).q ?? '').trim()), 303));
      registerPaymentPages(signedIn, deps);
      registerEventPages(signedIn, deps);
      registerMoneyPages(signedIn, deps);
      registerRoutingPages(signedIn, deps);
      registerCustomerPages(signedIn, deps);
      registerReconciliationPages(signedIn, deps);
      registerDisputePages(signedIn, deps);
    });
  });
}

const PAGES_BY_PREFIX: Record<string, string> = {
  ord: 'payment-orders',
  pay: 'payments',
  po: 'payouts',
  mdt: 'mandates',
  cus: 'customers',
  evt: 'events',
  we: 'webhook-endpoints',
};

/** Where the search box goes: an id opens its object; anything else is a reference (orders, then payouts). */
async function searchTarget(db: Db, req: FastifyRequest, q: string): Promise<string> {
  if (!q) return HOME;
  const prefix = /^([a-z]+)_[0-9a-z]{26}$/.exec(q)?.[1];
  if (prefix && PAGES_BY_PREFIX[prefix]) return `/dashboard/${PAGES_BY_PREFIX[prefix]}/${q}`;
  if (prefix === 'ref' && parseId('ref', q)) return `/dashboard/payments/${(await retrieveRefund(db, req.ctx, q)).payment}`;
  const reference = q.slice(0, 128);
  const orders = await listPaymentOrders(db, req.ctx, { reference, limit: 2 });
  if (orders.data.length === 1) return `/dashboard/payment-orders/${orders.data[0]!.id}`;
  if (orders.data.length === 0) {
    const payouts = await listPayouts(db, req.ctx, { reference, limit: 2 });
    if (payouts.data.length === 1) return `/dashboard/payouts/${payouts.data[0]!.id}`;
    if (payouts.data.length > 1) return `/dashboard/payouts?${new URLSearchParams({ reference })}`;
  }
  return `/dashboard/payment-orders?${new URLSearchParams({ reference })}`;
}

function renderError(error: FastifyError | ApiError, req: FastifyRequest, reply: FastifyReply) {
  let status: number;
  let message: string;
  if (error instanceof ApiError) {
    status = error.status;
    message = error.message;
  } else if (error.statusCode && error.statusCode < 500) {
    status = error.statusCode;
    message = error.message;
  } else {
    status = 500;
    message = 'Something went wrong on our side; it has been logged. Try again in a moment.';
    req.log.error({ err: error }, 'dashboard request failed');
  }
  const body = html`<p class="error" role="alert">${message}</p><p><a href="${HOME}">Back to the dashboard</a></p>`;
  const title = status === 404 ? 'Not found' : status === 403 ? 'Refused' : status >= 500 ? 'Error' : 'Not done';
  if (req.dashboard) return sendView(reply, req.dashboard.view, title, body, { status });
  return sendBare(reply, title, body, status);
}
