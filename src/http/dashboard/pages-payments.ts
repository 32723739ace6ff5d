// Dashboard pages of payment orders and payments: lists with filters, an order with its payments,
// a payment with its attempts, captures, refunds and events, and the actions on them (refund,
// capture or void an authorisation, cancel, and in test mode resolving a pending payment).
import { runMovement } from '../../movement/engine.js';
import type { FastifyRequest } from 'fastify';
import type { App } from '../types.js';
import { cancelOrderVoidingFirst, newVoid } from '../../domain/voids/service.js';
import { listPaymentOrders, retrievePaymentOrder } from '../../domain/payment-orders/service.js';
import { listPayments, resolveTestPayment, retrievePayment } from '../../domain/payments/service.js';
import { newRefund, listRefunds } from '../../domain/refunds/service.js';
import { listEvents } from '../../events/service.js';
import { ListPaymentOrdersQuery } from '../../domain/payment-orders/schema.js';
import { ListPaymentsQuery, ResolvePaymentBody, type PaymentView } from '../../domain/payments/schema.js';
import { CreateRefundBody, REFUND_REASONS } from '../../domain/refunds/schema.js';
import { newCapture } from '../../domain/captures/service.js';
import { CapturePaymentBody } from '../../domain/captures/schema.js';
import { PAYMENT_ORDER_STATUSES } from '../../domain/payment-orders/state.js';
import { PAYMENT_STATUSES } from '../../domain/payments/state.js';
import type { PaymentOrderView } from '../../domain/payment-orders/schema.js';
import type { RefundView } from '../../domain/refunds/schema.js';
import type { EventView } from '../../events/service.js';
import { routingSection } from './pages-routing.js';
import { act, checked, filled, formKey, viewOf, type DashboardDeps } from './act.js';
import { formOf } from './session.js';
import { code, facts, idLink, getForm, html, link, money, noticeOf, pager, parseMoney, postForm, sendView, status, table, timeline, when, type Html, type View } from './layout.js';

const NOTICES: Record<string, string> = {
  refunded: 'Refund requested. Its status and events are below.',
  captured: 'Capture requested. Its status is below.',
  voided: 'Void requested: the authorisation is released once the processor confirms. Its status is below.',
  resolved: 'The simulated processor has settled the payment.',
  cancelled: 'The payment order is cancelled.',
};
const orderLink = (id: string) => idLink(`/dashboard/payment-orders/${id}`, id);
const paymentLink = (id: string) => idLink(`/dashboard/payments/${id}`, id);

function paymentsTable(payments: PaymentView[]): Html {
  return table(payments, [
    { label: 'Payment', cell: (p) => paymentLink(p.id) },
    { label: 'Amount', cell: (p) => money(p.amount, p.currency) },
    { label: 'Status', cell: (p) => status(p.status) },
    { label: 'Refunded', cell: (p) => (p.amount_refunded ? money(p.amount_refunded, p.currency) : '') },
    { label: 'Method', cell: (p) => (p.payment_method.type === 'card' ? `${p.payment_method.card.brand} ·${p.payment_method.card.last4}` : `mandate ·${p.payment_method.last4}`) },
    { label: 'Connector', cell: (p) => p.connector ?? '' },
    { label: 'Order', cell: (p) => orderLink(p.payment_order) },
    { label: 'Created', cell: (p) => when(p.created_at) },
  ], 'No payments match.');
}

export function registerPaymentPages(app: App, deps: DashboardDeps) {
  const { db, rt } = deps;

  app.get('/dashboard/payment-orders', async (req, reply) => {
    const query = filled(req.query);
    const page = await req.read((from) => listPaymentOrders(from, req.ctx, checked(ListPaymentOrdersQuery, { limit: '25', ...query }, 'querystring')));
    const filters = getForm('/dashboard/payment-orders', [
      { name: 'reference', label: 'Reference', value: query.reference, placeholder: 'order-1042' },
      { name: 'status', label: 'Status', value: query.status, options: [...PAYMENT_ORDER_STATUSES] },
    ], 'Filter');
    const rows = table(page.data, [
      { label: 'Order', cell: (o: PaymentOrderView) => orderLink(o.id) },
      { label: 'Reference', cell: (o) => o.reference },
      { label: 'Amount', cell: (o) => money(o.amount, o.currency) },
      { label: 'Status', cell: (o) => status(o.status) },
      { label: 'Customer', cell: (o) => o.customer.email },
      { label: 'Created', cell: (o) => when(o.created_at) },
    ], 'No payment orders match.');
    return sendView(reply, viewOf(req), 'Payment orders', html`${filters}${rows}${pager('/dashboard/payment-orders', query, page)}`, { current: '/dashboard/payment-orders' });
  });

  app.get('/dashboard/payment-orders/:id', async (req, reply) => {
    const { id } = req.params as { id: string };
    const view = viewOf(req);
    const order = await retrievePaymentOrder(db, req.ctx, id);
    const [payments, events] = await Promise.all([
      listPayments(db, req.ctx, { payment_order: order.id, limit: 100 }),
      listEvents(db, req.ctx, { objects: [order.id], limit: 100 }),
    ]);
    const cancel = order.status === 'open'
      ? postForm(`/dashboard/payment-orders/${order.id}/cancel`, view.csrf, [{ hidden: 'idem', value: formKey() }], 'Cancel this order', 'danger')
      : '';
    const body = html`${facts([
      ['Id', code(order.id)],
      ['Reference', order.reference],
      ['Status', status(order.status)],
      ['Amount', money(order.amount, order.currency)],
      ['Paid', money(order.amount_paid, order.currency)],
      ['Customer', `${order.customer.name ?? ''} <${order.customer.email}>`],
      ['Description', order.description],
      ['Expires', when(order.expires_at)],
      ['Created', when(order.created_at)],
    ])}${cancel}<h2>Payments</h2>${paymentsTable(payments.data)}<h2>Events</h2>${timeline(events.data)}`;
    return sendView(reply, view, `Payment order ${order.reference}`, body, { notice: noticeOf(req, NOTICES), current: '/dashboard/payment-orders' });
  });

  app.post('/dashboard/payment-orders/:id/cancel', async (req, reply) => {
    const { id } = req.params as { id: string };
    await act(deps, req, formOf(req.body).idem, {}, () => cancelOrderVoidingFirst(db, rt, req.ctx, id));
    return reply.redirect(`/dashboard/payment-orders/${id}?notice=cancelled`, 303);
  });

  app.get('/dashboard/payments', async (req, reply) => {
    const query = filled(req.query);
    const page = await req.read((from) => listPayments(from, req.ctx, checked(ListPaymentsQuery, { limit: '25', ...query }, 'querystring')));
    const filters = getForm('/dashboard/payments', [
      { name: 'status', label: 'Status', value: query.status, options: [...PAYMENT_STATUSES] },
      { name: 'payment_order', label: 'Payment order', value: query.payment_order, placeholder: 'ord_…' },
    ], 'Filter');
    const hint = html`<p>To find a payment by the order's reference, use the search box above.</p>`;
    return sendView(reply, viewOf(req), 'Payments', html`${filters}${hint}${paymentsTable(page.data)}${pager('/dashboard/payments', query, page)}`, { current: '/dashboard/payments' });
  });

  app.get('/dashboard/payments/:id', async (req, reply) => {
    const { id } = req.params as { id: string };
    const payment = await retrievePayment(db, rt, req.ctx, id);
    const [order, refunds] = await Promise.all([
      retrievePaymentOrder(db, req.ctx, payment.payment_order),
      listRefunds(db, req.ctx, { payment: payment.id, limit: 100 }),
    ]);
    const events = await listEvents(db, req.ctx, { objects: [payment.id, ...refunds.data.map((r) => r.id)], limit: 100 });
    const body = paymentPage(viewOf(req), payment, order, refunds.data, events.data);
    return sendView(reply, viewOf(req), `Payment ${money(payment.amount, payment.currency)}`, body, { notice: noticeOf(req, NOTICES), current: '/dashboard/payments' });
  });

  app.post('/dashboard/payments/:id/refund', async (req, reply) => {
    const { id } = req.params as { id: string };
    const form = formOf(req.body);
    const payment = await retrievePayment(db, rt, req.ctx, id);
    const input = checked<CreateRefundBody>(CreateRefundBody, {
      payment: payment.id,
      ...(form.amount ? { amount: parseMoney(form.amount, payment.currency) } : {}),
      ...(form.reason ? { reason: form.reason } : {}),
    });
    await act(deps, req, form.idem, input, () => runMovement(db, rt, req.ctx, newRefund(db, rt, req.ctx, input)));
    return reply.redirect(`/dashboard/payments/${payment.id}?notice=refunded`, 303);
  });

  app.post('/dashboard/payments/:id/capture', async (req, reply) => {
    const { id } = req.params as { id: string };
    const form = formOf(req.body);
    const payment = await retrievePayment(db, rt, req.ctx, id);
    const input = checked<CapturePaymentBody>(CapturePaymentBody, {
      ...(form.amount ? { amount: parseMoney(form.amount, payment.currency) } : {}),
      final_capture: form.final_capture !== 'false',
    });
    await act(deps, req, form.idem, input, () => runMovement(db, rt, req.ctx, newCapture(db, rt, req.ctx, payment.id, input)));
    return reply.redirect(`/dashboard/payments/${payment.id}?notice=captured`, 303);
  });

  app.post('/dashboard/payments/:id/cancel', async (req, reply) => {
    const { id } = req.params as { id: string };
    await act(deps, req, formOf(req.body).idem, {}, () => runMovement(db, rt, req.ctx, newVoid(db, rt, req.ctx, id, {})));
    return reply.redirect(`/dashboard/payments/${id}?notice=voided`, 303);
  });

  app.post('/dashboard/payments/:id/resolve', async (req, reply) => {
    const { id } = req.params as { id: string };
    const form = formOf(req.body);
    const input = checked<ResolvePaymentBody>(ResolvePaymentBody, { outcome: form.outcome });
    await act(deps, req, form.idem, input, () => resolveTestPayment(db, rt, req.ctx, id, input.outcome as 'succeeded' | 'failed'));
    return reply.redirect(`/dashboard/payments/${id}?notice=resolved`, 303);
  });
}

function paymentPage(view: View, payment: PaymentView, order: PaymentOrderView, refunds: RefundView[], events: EventView[]): Html {
  const method = payment.payment_method.type === 'card'
    ? `${payment.payment_method.card.brand} ending ${payment.payment_method.card.last4}, expires ${payment.payment_method.card.exp_month}/${payment.payment_method.card.exp_year}`
    : html`mandate ${link(`/dashboard/mandates/${payment.payment_method.mandate}`, payment.payment_method.mandate)} (${payment.payment_method.scheme}, ·${payment.payment_method.last4})`;
  const remaining = payment.amount - payment.amount_refunded;
  const actions: Html[] = [];
  if (payment.status === 'succeeded' && remaining > 0) {
    actions.push(postForm(`/dashboard/payments/${payment.id}/refund`, view.csrf, [
      { hidden: 'idem', value: formKey() },
      { name: 'amount', label: `Amount (${payment.currency})`, value: money(remaining, payment.currency).split(' ')[0], required: true },
      { name: 'reason', label: 'Reason', value: 'requested_by_customer', options: [...REFUND_REASONS] },
    ], 'Refund'));
  }
  if (payment.status === 'requires_capture') {
    actions.push(postForm(`/dashboard/payments/${payment.id}/capture`, view.csrf, [
      { hidden: 'idem', value: formKey() },
      { name: 'amount', label: `Amount (${payment.currency})`, value: money(payment.amount_capturable, payment.currency).split(' ')[0], required: true },
      { name: 'final_capture', label: 'Final capture (release the rest)', value: 'true', options: ['true', 'false'] },
    ], 'Capture'));
    // The void, as POST /v1/payments/{id}/cancel does it: releases the whole authorisation.
    actions.push(postForm(`/dashboard/payments/${payment.id}/cancel`, view.csrf, [{ hidden: 'idem', value: formKey() }], 'Void the authorisation', 'danger'));
  }
  if (!view.livemode && (payment.status === 'pending' || payment.status === 'requires_action')) {
    actions.push(postForm(`/dashboard/payments/${payment.id}/resolve`, view.csrf, [
      { hidden: 'idem', value: formKey() },
      { name: 'outcome', label: 'Test helper: settle as', value: 'succeeded', options: ['succeeded', 'failed'] },
    ], 'Resolve'));
  }
  return html`${facts([
    ['Id', code(payment.id)],
    ['Status', status(payment.status)],
    ['Amount', money(payment.amount, payment.currency)],
    ['Refunded', money(payment.amount_refunded, payment.currency)],
    ['Capture', payment.capture_method === 'manual' ? `manual: ${money(payment.amount_captured, payment.currency)} captured, ${money(payment.amount_capturable, payment.currency)} capturable` : 'automatic'],
    ['Capture before', payment.capture_before ? when(payment.capture_before) : null],
    ['Order', html`${orderLink(order.id)} · reference ${code(order.reference)}`],
    ['Method', method],
    ['Connector', payment.connector],
    ['Connector reference', payment.connector_reference],
    ['Failure', payment.failure_code ? `${payment.failure_code}: ${payment.failure_message ?? ''}` : null],
    ['Disputed', payment.disputed ? html`${payment.disputes.map((d, i) => html`${i ? ' · ' : ''}${idLink(`/dashboard/disputes/${d}`, d)}`)}` : 'no'],
    ['Created', when(payment.created_at)],
    ['Version', payment.version],
  ])}
${actions.length ? html`<h2>Actions</h2><div class="actions">${actions}</div>` : ''}
<h2>Attempts</h2>${table(payment.attempts, [
    { label: 'Started', cell: (a) => when(a.started_at) },
    { label: 'Connector', cell: (a) => a.connector },
    { label: 'Outcome', cell: (a) => status(a.outcome) },
    { label: 'Error', cell: (a) => a.error_code ?? '' },
    { label: 'Duration', cell: (a) => `${a.duration_ms} ms` },
  ], 'No attempts.')}
${routingSection(payment.routing)}
${payment.capture_method === 'manual' ? html`<h2>Captures</h2>${table(payment.captures, [
    { label: 'Capture', cell: (c) => code(c.id) },
    { label: 'Amount', cell: (c) => money(c.amount, c.currency) },
    { label: 'Status', cell: (c) => status(c.status) },
    { label: 'Final', cell: (c) => (c.final_capture ? 'yes' : 'no') },
    { label: 'Failure', cell: (c) => c.failure_code ?? '' },
    { label: 'Created', cell: (c) => when(c.created_at) },
  ], 'No captures.')}` : ''}
<h2>Refunds</h2>${table(refunds, [
    { label: 'Refund', cell: (r) => code(r.id) },
    { label: 'Amount', cell: (r) => money(r.amount, r.currency) },
    { label: 'Status', cell: (r) => status(r.status) },
    { label: 'Reason', cell: (r) => r.reason ?? '' },
    { label: 'Failure', cell: (r) => r.failure_code ?? '' },
    { label: 'Created', cell: (r) => when(r.created_at) },
  ], 'No refunds.')}
<h2>Events</h2>${timeline(events)}`;
}
