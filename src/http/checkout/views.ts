// What the checkout pages say: the order (merchant, amount, currency, description), the card form
// with its errors, and each state an order or its payment can be in. Every value from the
// database or the request is escaped here.
import { CURRENCY_EXPONENTS } from '../../kernel/currencies.js';
import type { FieldErrors } from '../../domain/checkout/card-form.js';
import type { Checkout } from '../../domain/checkout/service.js';
import type { PaymentRow } from '../../domain/payments/transitions.js';
import { escapeHtml } from '../pages.js';

/** An amount in minor units as the customer reads it (`1,234.50`), in integers only. */
export function formatAmount(amount: number, currency: string): string {
  const exponent = CURRENCY_EXPONENTS.get(currency) ?? 2;
  const digits = String(amount).padStart(exponent + 1, '0');
  const whole = new Intl.NumberFormat('en-US').format(BigInt(digits.slice(0, digits.length - exponent)));
  return exponent === 0 ? whole : `${whole}.${digits.slice(-exponent)}`;
}

/** The order as the customer sees it at the top of every page. */
function summary({ order, merchantName }: Checkout): string {
  const description = order.description ? `<p class="description">${escapeHtml(order.description)}</p>` : '<p class="description"></p>';
  return (
    `<p class="merchant">${escapeHtml(merchantName)}</p>` +
    `<p class="amount" aria-label="Amount">${escapeHtml(formatAmount(order.amount, order.currency))}<span class="currency">${escapeHtml(order.currency)}</span></p>` +
    description
  );
}

const notice = (kind: 'bad' | 'good' | 'wait', html: string, role: 'alert' | 'status' = kind === 'bad' ? 'alert' : 'status') =>
  `<div class="notice ${kind}" role="${role}">${html}</div>`;

const link = (href: string, label: string, cls = 'button') => `<a class="${cls}" href="${escapeHtml(href)}">${escapeHtml(label)}</a>`;

/** Why a payment failed, in the customer's words: what happened and what to do. */
export function declineMessage(failureCode: string | null): string {
  switch (failureCode) {
    case 'insufficient_funds':
      return 'Your card was declined for insufficient funds. Try another card.';
    case 'expired_card':
      return 'Your card has expired. Try another card.';
    case 'incorrect_cvc':
      return 'The security code was not accepted. Check it and try again.';
    case 'authentication_failed':
    case 'authentication_required':
      return 'Your bank could not confirm the payment. Try again, or use another card.';
    case 'processing_error':
      return 'The payment could not be processed. Nothing was charged; please try again.';
    default:
      return 'Your card was declined. Try again, or use another card.';
  }
}

export interface FormState {
  csrf: string;
  attempt: string;
  /** A field's error, shown under it. */
  errors?: FieldErrors;
  /** An error about the payment as a whole, shown above the form. */
  problem?: string;
  /** The expiry as typed, given back (card number and CVC never are). */
  expiry?: string;
  /** The consent box as the customer left it, given back; never ticked in advance. */
  saveCard?: boolean;
}

/**
 * The consent box of an order that asks to save the card: what the merchant (the name the page
 * shows) may do with it, in the customer's words. Unticked, nothing is saved.
 */
function consentBox({ order, merchantName }: Checkout, ticked: boolean): string {
  if (order.setupFutureUsage === null) return '';
  const merchant = escapeHtml(merchantName);
  const text =
    order.setupFutureUsage === 'off_session'
      ? `Save this card with ${merchant} and allow ${merchant} to charge it later without me present, as its terms allow (for example a subscription or a top-up).`
      : `Save this card with ${merchant} for my future purchases. ${merchant} may keep it and let me pay with it again when I am present; it will not charge the card without me.`;
  return (
    `<label class="consent" for="save_card"><input type="checkbox" id="save_card" name="save_card" value="yes"${ticked ? ' checked' : ''}>` +
    `<span>${text} Optional: without it, the card is used for this payment only.</span></label>`
  );
}

function field(name: 'number' | 'expiry' | 'cvc', label: string, hint: string, attrs: string, error: string | undefined, value = ''): string {
  const invalid = error ? ' aria-invalid="true"' : '';
  return (
    `<label for="${name}">${label}${hint ? ` <span class="hint">${hint}</span>` : ''}</label>` +
    `<input id="${name}" name="${name}" ${attrs} value="${escapeHtml(value)}" aria-describedby="${name}-error"${invalid}>` +
    `<p class="error" id="${name}-error" aria-live="polite">${error ? escapeHtml(error) : ''}</p>`
  );
}

export function formPage(checkout: Checkout, action: string, state: FormState): string {
  const e = state.errors ?? {};
  const number = field('number', 'Card number', '', 'type="text" inputmode="numeric" autocomplete="cc-number" required pattern="[0-9 \\-]{12,23}" maxlength="23" spellcheck="false"', e.number);
  const expiry = field('expiry', 'Expiry date', 'MM / YY', 'type="text" inputmode="numeric" autocomplete="cc-exp" required maxlength="9" placeholder="MM / YY"', e.expiry, state.expiry);
  const cvc = field('cvc', 'Security code', 'CVC', 'type="text" inputmode="numeric" autocomplete="cc-csc" required pattern="[0-9]{3,4}" maxlength="4"', e.cvc);
  const amount = formatAmount(checkout.order.amount, checkout.order.currency);
  const cancel = checkout.order.cancelUrl ? link(checkout.order.cancelUrl, `Cancel and return to ${checkout.merchantName}`, 'secondary') : '';
  return (
    `<h1>Pay by card</h1>${summary(checkout)}` +
    (state.problem ? notice('bad', `<p>${escapeHtml(state.problem)}</p>`) : '') +
    `<form id="card-form" method="post" action="${escapeHtml(action)}">` +
    `<input type="hidden" name="csrf" value="${escapeHtml(state.csrf)}"><input type="hidden" name="attempt" value="${escapeHtml(state.attempt)}">` +
    number +
    `<div class="row"><div>${expiry}</div><div>${cvc}</div></div>` +
    consentBox(checkout, state.saveCard === true) +
    `<button type="submit" id="pay" data-busy="Paying…">Pay ${escapeHtml(amount)} ${escapeHtml(checkout.order.currency)}</button>` +
    `</form>${cancel}`
  );
}

const successLink = (checkout: Checkout) => (checkout.order.successUrl ? link(checkout.order.successUrl, `Return to ${checkout.merchantName}`) : '<p>You may close this page.</p>');

export function paidPage(checkout: Checkout): string {
  return `<h1>Payment received</h1>${summary(checkout)}${notice('good', '<p>Thank you. This order is paid.</p>')}${successLink(checkout)}`;
}

/** A manual order's card authorised: the amount is held on the card until the merchant takes it. */
export function authorisedPage(checkout: Checkout): string {
  const text = `<p>Thank you. The amount is held on your card; ${escapeHtml(checkout.merchantName)} takes it when your order is fulfilled.</p>`;
  return `<h1>Payment authorised</h1>${summary(checkout)}${notice('good', text)}${successLink(checkout)}`;
}

/** An order that takes no card: cancelled or expired. */
export function closedPage(checkout: Checkout, state: 'cancelled' | 'expired'): string {
  const back = checkout.order.cancelUrl ? link(checkout.order.cancelUrl, `Return to ${checkout.merchantName}`) : '';
  const why = state === 'cancelled' ? 'This order was cancelled.' : 'This order has expired.';
  return `<h1>Order ${state}</h1>${summary(checkout)}${notice('bad', `<p>${why} No payment can be made for it.</p>`, 'status')}${back}`;
}

/** A payment in flight: waiting for the processor, or for the customer at their bank. */
export function waitingPage(checkout: Checkout, self: string, payment: PaymentRow | undefined): string {
  const action = payment?.status === 'requires_action' && payment.nextActionUrl ? link(payment.nextActionUrl, 'Continue to your bank') : '';
  const text = action ? 'Your bank needs you to confirm this payment.' : 'Your payment is being processed. Nothing more is needed from you.';
  return `<h1>Payment in progress</h1>${summary(checkout)}${notice('wait', `<p>${text}</p>`)}${action}${link(self, 'Check again', 'secondary')}`;
}

/** A live-mode checkout not served over TLS takes no card. */
export function insecurePage(checkout: Checkout): string {
  return `<h1>Checkout unavailable</h1>${summary(checkout)}${notice('bad', '<p>This checkout is not served over a secure connection, so it takes no card. Please contact the shop.</p>')}`;
}

export function missingPage(): string {
  return `<h1>Checkout not found</h1><p>This payment link is not valid. Check the link you were given, or ask the shop for a new one.</p>`;
}

export function refusedFormPage(self: string): string {
  return `<h1>Please try again</h1>${notice('bad', '<p>This form has expired or was not sent from this page. Nothing was charged.</p>')}${link(self, 'Back to the payment page')}`;
}
