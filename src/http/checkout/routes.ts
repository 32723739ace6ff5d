// The hosted checkout's pages (docs/checkout-and-dashboard.md), reached by the customer's browser with no API key:
// GET /checkout/{token} shows the order and its card form (or the order's state), and
// POST /checkout/{token} pays it. After a POST the browser is sent on (303): back to the page with
// `?payment=pay_…` to show the outcome, or to the customer action (3-D Secure), whose end brings
// it back to the same page through the payment's return endpoint. Pages, never JSON: a customer
// reads every answer, errors included.
import crypto from 'node:crypto';
import { Type } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../types.js';
import type { Db } from '../../storage/db.js';
import type { Runtime } from '../../runtime.js';
import { ApiError } from '../../kernel/errors.js';
import { CHECKOUT_PATH } from '../../domain/payment-orders/service.js';
import { CARD_MESSAGES, checkCardForm } from '../../domain/checkout/card-form.js';
import { orderPayable } from '../../domain/payment-orders/state.js';
import { checkoutPayment, findCheckout, inFlightPayment, payCheckout, type Checkout, type CheckoutResult } from '../../domain/checkout/service.js';
import type { PaymentRow } from '../../domain/payments/transitions.js';
import { requestParams } from '../pages.js';
import { createCsrf } from './csrf.js';
import { sendCheckoutPage } from './shell.js';
import { authorisedPage, closedPage, declineMessage, formPage, insecurePage, missingPage, paidPage, refusedFormPage, waitingPage, type FormState } from './views.js';

const Params = Type.Object({ token: Type.String({ maxLength: 128 }) });
const Query = Type.Object({ payment: Type.Optional(Type.String({ maxLength: 64 })) });
const FORM_LIMIT_BYTES = 4096;

export interface CheckoutDeps {
  idempotencyRetentionS: number;
}

/** The field a payment error is about, by the API's parameter names. */
function fieldOf(param: string | null): 'number' | 'expiry' | 'cvc' | undefined {
  if (param === 'payment_method.card.number') return 'number';
  if (param === 'payment_method.card.exp_month' || param === 'payment_method.card.exp_year') return 'expiry';
  if (param === 'payment_method.card.cvc') return 'cvc';
  return undefined;
}

/**
 * What the customer is told about a card the payment service refused. The form's own checks
 * (Luhn, expiry, CVC) passed already, so a refused number is about test cards: test mode takes
 * only them (on the simulators), live mode never.
 */
function fieldMessage(field: 'number' | 'expiry' | 'cvc', livemode: boolean): string {
  if (field === 'number') return livemode ? 'This is a test card; a real payment needs a real card.' : 'Test mode takes only test cards, such as 4242 4242 4242 4242.';
  return field === 'expiry' ? 'Check the expiry date.' : CARD_MESSAGES.cvcInvalid;
}

/** What the customer is told about a payment the service refused (nothing was charged). */
function refusalMessage(code: string, message: string, param: string | null): string {
  // The order's customer was deleted since: the card has no one to be saved for.
  if (code === 'resource_missing' && param === 'customer') return 'This shop cannot save your card right now. Untick the box to pay without saving it.';
  if (code === 'processor_unavailable') return 'The payment service cannot reach the card processor right now. Nothing was charged; please try again in a moment.';
  if (code === 'idempotency_key_in_use') return 'This payment is still being processed. Wait a moment, then check again.';
  if (code === 'rate_limited') return message;
  if (code === 'routing_no_match' || code === 'amount_above_limit') return 'This shop cannot take card payments for this order. Please contact the shop.';
  return 'The payment could not be made. Nothing was charged; please try again.';
}

export function registerCheckoutRoutes(app: App, db: Db, rt: Runtime, deps: CheckoutDeps) {
  const csrf = { plain: createCsrf(rt.fingerprintKey, false), secure: createCsrf(rt.fingerprintKey, true) };
  const secure = () => rt.publicUrl().startsWith('https:');
  const csrfNow = () => (secure() ? csrf.secure : csrf.plain);
  const pathOf = (token: string) => `${CHECKOUT_PATH}/${token}`;

  const page = (reply: FastifyReply, checkout: Checkout | undefined, title: string, body: string, status = 200) =>
    sendCheckoutPage(reply, {
      title,
      body,
      status,
      livemode: checkout?.order.livemode ?? true,
      secure: secure(),
      merchant: checkout && { name: checkout.merchantName, supportEmail: checkout.supportEmail },
    });

  /** The page for the order as it stands; `payment`: one of its payments to report on. */
  async function render(req: FastifyRequest, reply: FastifyReply, checkout: Checkout, token: string, opts: { payment?: PaymentRow; form?: Partial<FormState>; status?: number } = {}) {
    const { order } = checkout;
    const self = pathOf(token);
    if (order.status === 'paid') return page(reply, checkout, 'Payment received', paidPage(checkout));
    if (order.status === 'cancelled') return page(reply, checkout, 'Order cancelled', closedPage(checkout, 'cancelled'));
    if (order.status === 'expired' || (order.status === 'open' && !orderPayable.test(order, rt.now()))) return page(reply, checkout, 'Order expired', closedPage(checkout, 'expired'));
    if (order.status === 'processing') {
      const current = await inFlightPayment(db, checkout);
      // A manual order's payment is authorised only: done for the customer, the merchant captures it later.
      if (current?.status === 'requires_capture') return page(reply, checkout, 'Payment authorised', authorisedPage(checkout));
      return page(reply, checkout, 'Payment in progress', waitingPage(checkout, self, current));
    }
    // Live card data only over TLS: the order's URL says how the customer reaches this page.
    if (order.livemode && !order.checkoutUrl?.startsWith('https:')) return page(reply, checkout, 'Checkout unavailable', insecurePage(checkout), 503);
    const declined = opts.payment?.status === 'failed' ? declineMessage(opts.payment.failureCode) : undefined;
    const state: FormState = {
      csrf: csrfNow().issue(req, reply, token),
      attempt: crypto.randomBytes(18).toString('base64url'),
      ...(declined ? { problem: declined } : {}),
      ...opts.form,
    };
    return page(reply, checkout, `Pay ${checkout.merchantName}`, formPage(checkout, self, state), opts.status ?? 200);
  }

  app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT_BYTES }, (_req, body, done) =>
      done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    // Not part of the API: pages for the customer's browser (docs/checkout-and-dashboard.md describes them).
    const schema = { hide: true, params: Params, querystring: Query };

    scope.get(`${CHECKOUT_PATH}/:token`, { config: { auth: false }, schema }, async (req, reply) => {
      const { token } = req.params as { token: string };
      const checkout = await findCheckout(db, token);
      if (!checkout) return page(reply, undefined, 'Checkout not found', missingPage(), 404);
      const paymentId = (req.query as { payment?: string }).payment;
      const payment = paymentId ? await checkoutPayment(db, checkout, paymentId) : undefined;
      return render(req, reply, checkout, token, { payment });
    });

    scope.post(`${CHECKOUT_PATH}/:token`, { config: { auth: false }, bodyLimit: FORM_LIMIT_BYTES, schema: { hide: true, params: Params } }, async (req, reply) => {
      const { token } = req.params as { token: string };
      const checkout = await findCheckout(db, token);
      if (!checkout) return page(reply, undefined, 'Checkout not found', missingPage(), 404);
      const fields = requestParams({}, req.body);
      if (!csrfNow().verify(req, token, fields.csrf)) return page(reply, checkout, 'Please try again', refusedFormPage(pathOf(token)), 403);
      const checked = checkCardForm(fields, rt.now());
      // An unticked checkbox is not sent at all: only a ticked box saves the card.
      const saveCard = fields.save_card === 'yes';
      const typed = { expiry: (fields.expiry ?? '').slice(0, 9), saveCard };
      if ('errors' in checked) return render(req, reply, checkout, token, { form: { ...typed, errors: checked.errors }, status: 422 });

      let result: CheckoutResult;
      let status = 422;
      try {
        result = await payCheckout(db, rt, deps, checkout, { card: checked.card, saveCard, attempt: fields.attempt ?? '' }, req.id);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        if (err.status >= 500) req.log.warn({ code: err.code }, 'checkout payment not made');
        result = { kind: 'refused', code: err.code, message: err.message, param: err.param ?? null };
        status = err.status;
      }
      if (result.kind === 'refused') {
        // Paid, cancelled, expired or busy meanwhile: the page says so, and no card was taken.
        if (result.code === 'order_not_payable') return reply.redirect(pathOf(token), 303);
        const field = fieldOf(result.param);
        const form = field
          ? { ...typed, errors: { [field]: fieldMessage(field, checkout.order.livemode) } }
          : { ...typed, problem: refusalMessage(result.code, result.message, result.param) };
        return render(req, reply, checkout, token, { form, status });
      }
      const { payment } = result;
      if (payment.status === 'requires_action' && payment.next_action) return reply.redirect(payment.next_action.url, 303);
      return reply.redirect(`${pathOf(token)}?payment=${encodeURIComponent(payment.id)}`, 303);
    });
  });
}
