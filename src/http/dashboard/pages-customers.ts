// Dashboard pages of customers: the list, and one customer with its saved cards (brand, last 4,
// expiry, usage), each of which can be detached here as through the API.
import type { App } from '../types.js';
import { listCustomers, retrieveCustomer } from '../../domain/customers/service.js';
import { detachPaymentMethod, listPaymentMethods } from '../../domain/payment-methods/service.js';
import { ListCustomersQuery } from '../../domain/customers/schema.js';
import type { PaymentMethodView } from '../../domain/payment-methods/schema.js';
import { listEvents } from '../../events/service.js';
import { act, checked, filled, formKey, viewOf, type DashboardDeps } from './act.js';
import { formOf } from './session.js';
import { code, facts, getForm, html, idLink, noticeOf, pager, postForm, sendView, status, table, timeline, when } from './layout.js';

const NOTICES: Record<string, string> = { detached: 'The card is detached: its card data is erased and it can no longer be used.' };
/** More than a customer keeps in practice; the page says so when there are more. */
const CARDS_SHOWN = 100;

const customerLink = (id: string) => idLink(`/dashboard/customers/${id}`, id);
const expiry = (pm: PaymentMethodView) => `${String(pm.card.exp_month).padStart(2, '0')}/${pm.card.exp_year}`;

export function registerCustomerPages(app: App, deps: DashboardDeps) {
  const { db, rt } = deps;

  app.get('/dashboard/customers', async (req, reply) => {
    const query = filled(req.query);
    const page = await req.read((from) => listCustomers(from, req.ctx, checked<ListCustomersQuery>(ListCustomersQuery, { limit: '25', ...query }, 'querystring')));
    const filters = getForm('/dashboard/customers', [
      { name: 'email', label: 'Email', value: query.email },
      { name: 'reference', label: 'Reference', value: query.reference },
    ], 'Filter');
    const rows = table(page.data, [
      { label: 'Customer', cell: (c) => customerLink(c.id) },
      { label: 'Email', cell: (c) => c.email },
      { label: 'Name', cell: (c) => c.name ?? '' },
      { label: 'Reference', cell: (c) => c.reference ?? '' },
      { label: 'Created', cell: (c) => when(c.created_at) },
    ], 'No customers match.');
    return sendView(reply, viewOf(req), 'Customers', html`${filters}${rows}${pager('/dashboard/customers', query, page)}`, { current: '/dashboard/customers' });
  });

  app.get('/dashboard/customers/:id', async (req, reply) => {
    const { id } = req.params as { id: string };
    const view = viewOf(req);
    const customer = await retrieveCustomer(db, req.ctx, id);
    const [cards, events] = await Promise.all([
      listPaymentMethods(db, req.ctx, { customer: customer.id, limit: CARDS_SHOWN }),
      listEvents(db, req.ctx, { objects: [customer.id], limit: 100 }),
    ]);
    const detach = (pm: PaymentMethodView) =>
      pm.status === 'detached'
        ? ''
        : postForm(`/dashboard/payment-methods/${pm.id}/detach`, view.csrf, [{ hidden: 'idem', value: formKey() }], `Detach ·${pm.card.last4}`, 'danger');
    const saved = table(cards.data, [
      { label: 'Card', cell: (pm) => code(pm.id) },
      { label: 'Brand', cell: (pm) => pm.card.brand },
      { label: 'Last 4', cell: (pm) => pm.card.last4 },
      { label: 'Expiry', cell: (pm) => expiry(pm) },
      { label: 'Usage', cell: (pm) => pm.usage },
      { label: 'Status', cell: (pm) => status(pm.status) },
      { label: '', cell: detach },
    ], 'No saved cards.');
    const more = cards.has_more ? html`<p>Only the ${CARDS_SHOWN} newest cards are shown; GET /v1/payment-methods?customer=${customer.id} lists them all.</p>` : '';
    const body = html`${facts([
      ['Id', code(customer.id)],
      ['Email', customer.email],
      ['Name', customer.name],
      ['Reference', customer.reference],
      ['Created', when(customer.created_at)],
    ])}<h2>Saved cards</h2>${saved}${more}<h2>Events</h2>${timeline(events.data)}`;
    return sendView(reply, view, `Customer ${customer.name ?? customer.email}`, body, { notice: noticeOf(req, NOTICES), current: '/dashboard/customers' });
  });

  app.post('/dashboard/payment-methods/:id/detach', async (req, reply) => {
    const { id } = req.params as { id: string };
    const form = formOf(req.body);
    const detached = await act<PaymentMethodView>(deps, req, form.idem, {}, () => detachPaymentMethod(db, rt.vault, req.ctx, id, rt.now()));
    return reply.redirect(`/dashboard/customers/${detached.customer}?notice=detached`, 303);
  });
}
