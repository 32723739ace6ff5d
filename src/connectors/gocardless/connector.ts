// The GoCardless connector: direct debit mandates and the payments (debits) made under them, in
// the API's direct flow: a customer, their bank account and a mandate on it, created in three
// calls. We take the bank details ourselves (POST /v1/mandates carries them; nobody is redirected),
// which is what that flow is for; the billing-request flow is for a payer GoCardless must meet
// on its own pages, which this API has no step for.
//
// Every creation carries our id as its Idempotency-Key (the customer and bank account under our
// mandate id with a suffix), and our id in the object's metadata, which GoCardless repeats in
// its events (resource_metadata): how a webhook names our object, and how a status question
// without GoCardless's id finds it. Refunds are not offered (GoCardless requires them enabled per
// creditor; see docs/processors.md), so the catalogue lists none.
import type { Customer, CustomerBankAccount, Mandate, Payment } from 'gocardless-nodejs/types';
import type { HttpClient } from '../http.js';
import {
  connectorError,
  type ChargeStatusResult,
  type Connector,
  type ConnectorBankAccount,
  type MandateSetupRequest,
  type MandateStatusResult,
  type StatusRequest,
} from '../types.js';
import { createGoCardlessClient, type Answer, type GoCardlessClient } from './client.js';
import { MANDATE_KEY, mandateStateOf, PAYMENT_KEY, paymentStateOf } from './mapping.js';
import { parseGoCardlessWebhook } from './webhooks.js';

/** Pages of GoCardless's largest size looked through, newest first, for an object we hold no id of. */
const SCAN_PAGES = 4;
const PAGE = 500;

export interface GoCardlessConnectorOptions {
  accessToken: string;
  /** The account's webhook secrets, newest first (current, then previous in its grace period). */
  webhookSecrets: string[];
  livemode: boolean;
  /** GOCARDLESS_API_BASE_URL; unset: GoCardless's sandbox or live host by mode. */
  apiBaseUrl: string | undefined;
  http: HttpClient;
}

/** A GoCardless customer's names: a personal name split in two, otherwise (one word, or none) a company name. */
function customerNames(customer: MandateSetupRequest['customer']): Pick<Customer, 'given_name' | 'family_name' | 'company_name'> {
  const words = (customer.name ?? '').trim().split(/\s+/).filter(Boolean);
  if (words.length >= 2) return { given_name: words.slice(0, -1).join(' '), family_name: words.at(-1)! };
  return { company_name: words[0] ?? customer.email };
}

/** The bank account as GoCardless takes it: an IBAN, or the local details of its country. */
function bankDetails(account: ConnectorBankAccount): Record<string, string> {
  if (account.sortCode) return { account_number: account.secret, branch_code: account.sortCode };
  if (account.routingNumber) return { account_number: account.secret, bank_code: account.routingNumber, account_type: 'checking' };
  return { iban: account.secret };
}

/** GoCardless's refusals of a payment that are about its mandate. */
const MANDATE_REFUSALS = new Set(['mandate_is_inactive', 'mandate_not_active', 'mandate_cancelled', 'mandate_expired', 'mandate_failed']);

export function createGoCardlessConnector(opts: GoCardlessConnectorOptions): Connector {
  const gc: GoCardlessClient = createGoCardlessClient(opts);
  /** A status question's answer: the object read by `to`, not found (GoCardless answered 404, or a scan found nothing), or the error. */
  const read = <T, R>(answer: Answer<T> | 'absent', to: (value: T) => R) =>
    answer === 'absent' || (!answer.ok && answer.status === 404) ? ({ kind: 'not_found' } as const) : answer.ok ? to(answer.value) : answer.error;

  /** The newest object of `path` carrying our id under `key` in its metadata; uncertain (an error) when the scan ends before the list does. */
  async function scan<T extends { id?: string; metadata?: Record<string, string> }>(path: string, key: string, id: string, signal: AbortSignal): Promise<Answer<T> | 'absent'> {
    const resource = path.slice(1);
    let after: string | undefined;
    for (let page = 0; page < SCAN_PAGES; page++) {
      const query = new URLSearchParams({ limit: String(PAGE), ...(after ? { after } : {}) });
      const answer = await gc.get<T[]>(`${path}?${query}`, resource, signal);
      if (!answer.ok) return answer;
      const found = answer.value.find((object) => object.metadata?.[key] === id);
      if (found) return { ok: true, value: found };
      if (answer.value.length < PAGE) return 'absent';
      after = answer.value.at(-1)!.id;
    }
    return { ok: false, status: 0, reason: undefined, error: connectorError('invalid_response', `${id} is not among the newest ${SCAN_PAGES * PAGE} ${resource} at GoCardless; cannot tell whether it holds it`) };
  }

  const mandateStatus = async (request: StatusRequest, signal: AbortSignal): Promise<MandateStatusResult> => {
    const answer = request.connectorReference
      ? await gc.get<Mandate>(`/mandates/${encodeURIComponent(request.connectorReference)}`, 'mandates', signal)
      : await scan<Mandate>('/mandates', MANDATE_KEY, request.reference, signal);
    return read(answer, (mandate) => mandateStateOf(mandate));
  };

  return {
    name: 'gocardless',
    modes: [opts.livemode ? 'live' : 'test'],
    paymentMethodTypes: ['mandate'],
    async charge(request, signal) {
      if (!request.mandate) return connectorError('request_rejected', 'GoCardless takes direct debits under a mandate only; nothing was sent');
      const payment = {
        amount: request.amount,
        currency: request.currency as Payment['currency'],
        metadata: { [PAYMENT_KEY]: request.reference },
        links: { mandate: request.mandate.connectorReference },
      };
      const answer = await gc.create<Payment>('/payments', 'payments', payment, request.reference, signal);
      if (!answer.ok && answer.status === 422 && answer.reason && MANDATE_REFUSALS.has(answer.reason)) {
        return { kind: 'declined', connectorReference: null, failureCode: 'mandate_invalid', declineType: 'do_not_retry', message: `GoCardless refused the debit: its mandate is not active (${answer.reason}).` };
      }
      return answer.ok ? paymentStateOf(answer.value) : answer.error;
    },
    async chargeStatus(request, signal): Promise<ChargeStatusResult> {
      const answer = request.connectorReference
        ? await gc.get<Payment>(`/payments/${encodeURIComponent(request.connectorReference)}`, 'payments', signal)
        : await scan<Payment>('/payments', PAYMENT_KEY, request.reference, signal);
      return read(answer, (payment) => paymentStateOf(payment));
    },
    refund: async () => connectorError('request_rejected', 'refunds through GoCardless are not offered by this connector; nothing was sent'),
    refundStatus: async () => ({ kind: 'not_found' }),
    async setupMandate(request, signal) {
      const { reference, customer, account } = request;
      const metadata = { [MANDATE_KEY]: reference };
      const payer = await gc.create<Customer>('/customers', 'customers', { email: customer.email, ...customerNames(customer), metadata }, `${reference}-customer`, signal);
      if (!payer.ok) return payer.error;
      const bankAccount = {
        // Bacs takes at most 18 characters; the name is for the payer's bank statement only.
        account_holder_name: (customer.name ?? customer.email).slice(0, 18),
        country_code: account.country,
        currency: account.currency,
        ...bankDetails(account),
        metadata,
        links: { customer: payer.value.id! },
      };
      const held = await gc.create<CustomerBankAccount>('/customer_bank_accounts', 'customer_bank_accounts', bankAccount, `${reference}-bank-account`, signal);
      if (!held.ok) return held.error;
      const mandate = { scheme: request.scheme, metadata, links: { customer_bank_account: held.value.id! } };
      const answer = await gc.create<Mandate>('/mandates', 'mandates', mandate, reference, signal);
      return answer.ok ? mandateStateOf(answer.value) : answer.error;
    },
    mandateStatus,
    async cancelMandate(request, signal) {
      const id = request.connectorReference;
      if (!id) return mandateStatus(request, signal);
      const answer = await gc.action<Mandate>(`/mandates/${encodeURIComponent(id)}/actions/cancel`, 'mandates', signal);
      // Cancelled already (by the payer's bank, or an earlier call): GoCardless refuses; its status says where it stands.
      if (!answer.ok) return mandateStatus(request, signal);
      return mandateStateOf(answer.value, { origin: 'api' });
    },
    parseWebhook: (input) => parseGoCardlessWebhook(opts.webhookSecrets, input),
  };
}
