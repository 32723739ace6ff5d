// A fake GoCardless on a local port, for the endpoints the connector uses: customers, customer
// bank accounts, mandates (create, get, list, cancel) and payments (create, get, list). It answers
// as GoCardless documents (https://developer.gocardless.com/api-reference): JSON envelopes named by
// resource, a Bearer access token (sandbox_… / live_…) and a GoCardless-Version header required,
// Idempotency-Key on creations (a key already used answers 409 invalid_state with
// idempotent_creation_conflict and links.conflicting_resource_id), lists newest first with
// cursors, 422 validation_failed / invalid_state errors. Objects are typed by the official SDK's
// types. Mandates start pending_submission and payments pending_submission; the test moves them
// (`setMandate`, `setPayment`) and sends their webhooks, a batch of events signed as GoCardless
// signs them (hex HMAC-SHA256 of the body under the endpoint's secret, in Webhook-Signature).
// Faults: 429 before acting, 500 after acting, no answer after acting, connections refused.
import crypto from 'node:crypto';
import http from 'node:http';
import type { Customer, CustomerBankAccount, Event, Mandate, MandateStatus, Payment, PaymentStatus } from 'gocardless-nodejs/types';
import { FakeProcessor } from './processor.js';

export type Fault = '429' | '500_after' | 'hang_after';
type Answer = { status: number; body: unknown };
type Resource = 'customers' | 'customer_bank_accounts' | 'mandates' | 'payments';
type Stored = (Customer | CustomerBankAccount | Mandate | Payment) & { id: string; metadata?: Record<string, string> };

const error = (status: number, type: string, message: string, errors: unknown[] = []): Answer => ({
  status,
  body: { error: { type, code: status, message, documentation_url: `https://developer.gocardless.com/api-reference#${type}`, request_id: crypto.randomUUID(), errors } },
});
const newId = (prefix: string) => `${prefix}${crypto.randomBytes(7).toString('hex').toUpperCase()}`;
const PREFIX: Record<Resource, string> = { customers: 'CU', customer_bank_accounts: 'BA', mandates: 'MD', payments: 'PM' };

export class FakeGoCardless extends FakeProcessor<Fault> {
  readonly objects: Record<Resource, Map<string, Stored>> = { customers: new Map(), customer_bank_accounts: new Map(), mandates: new Map(), payments: new Map() };
  /** Creation requests received, by Idempotency-Key, replays included. */
  readonly requests = new Map<string, number>();
  private readonly keys = new Map<string, { resource: Resource; id: string }>();
  private order = 0;

  mandateOf(ourId: string): Mandate | undefined {
    return [...this.objects.mandates.values()].find((m) => m.metadata?.mandate_id === ourId) as Mandate | undefined;
  }

  paymentOf(ourId: string): Payment | undefined {
    return [...this.objects.payments.values()].find((p) => p.metadata?.payment_id === ourId) as Payment | undefined;
  }

  /** Moves a mandate at GoCardless (as its bank or payer would) and answers the event GoCardless then sends (its action names the new status). */
  setMandate(id: string, status: `${MandateStatus}`, details: Event['details'] = { origin: 'bank' }): Event {
    const mandate = this.objects.mandates.get(id)! as Mandate;
    mandate.status = status;
    return this.event('mandates', status === 'pending_submission' ? 'created' : status, { mandate: id }, mandate.metadata, details);
  }

  setPayment(id: string, status: `${PaymentStatus}`, details: Event['details'] = { origin: 'bank' }): Event {
    const payment = this.objects.payments.get(id)! as Payment;
    payment.status = status;
    return this.event('payments', status === 'pending_submission' ? 'created' : status, { payment: id }, payment.metadata, details);
  }

  event(resourceType: 'mandates' | 'payments', action: string, links: Event['links'], resourceMetadata: Record<string, string> | undefined, details: Event['details'] = {}): Event {
    return { id: newId('EV'), created_at: new Date().toISOString(), action, resource_type: resourceType, links, details, metadata: {}, resource_metadata: resourceMetadata ?? {} };
  }

  protected async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let text = '';
    for await (const chunk of req) text += chunk;
    const send = (answer: Answer) => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    if (!/^Bearer (sandbox|live)_\S+$/.test(req.headers.authorization ?? '')) return void send(error(401, 'invalid_api_usage', 'Invalid access token', [{ reason: 'access_token_not_found', message: 'Access token not found' }]));
    if (req.headers['gocardless-version'] !== '2015-07-06') return void send(error(400, 'invalid_api_usage', 'GoCardless-Version header missing or unknown', [{ reason: 'missing_version_header' }]));
    const url = new URL(req.url!, 'http://gocardless');
    const [, resource, id, actions, action] = url.pathname.split('/') as [string, Resource, string | undefined, string | undefined, string | undefined];
    if (!(resource in this.objects)) return void send(error(404, 'invalid_api_usage', 'Resource not found', [{ reason: 'resource_not_found' }]));
    if (req.method === 'GET') return void send(id ? this.read(resource, id) : this.list(resource, url));
    const key = req.headers['idempotency-key'] as string | undefined;
    if (key) this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    const fault = this.faults.shift();
    if (fault === '429') return void send(error(429, 'invalid_api_usage', 'Rate limit exceeded', [{ reason: 'rate_limit_exceeded' }]));
    let body: Record<string, any>;
    try {
      body = JSON.parse(text);
    } catch {
      return void send(error(400, 'invalid_api_usage', 'Invalid JSON', [{ reason: 'invalid_json' }]));
    }
    const answer = id && actions === 'actions' && action === 'cancel' ? this.cancel(id) : this.createOnce(resource, key, body[resource]);
    if (fault === '500_after') return void send(error(500, 'gocardless', 'Uh-oh, something went wrong', [{ reason: 'internal_server_error' }]));
    if (fault === 'hang_after') return;
    send(answer);
  }

  private read(resource: Resource, id: string): Answer {
    const found = this.objects[resource].get(id);
    return found ? { status: 200, body: { [resource]: strip(found) } } : error(404, 'invalid_api_usage', 'Resource not found', [{ reason: 'resource_not_found', message: 'Resource not found' }]);
  }

  private list(resource: Resource, url: URL): Answer {
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 50), 500);
    const all = [...this.objects[resource].values()].sort((a, b) => (b as any)._order - (a as any)._order);
    const after = url.searchParams.get('after');
    const from = after ? all.findIndex((o) => o.id === after) + 1 : 0;
    const page = all.slice(from, from + limit);
    const more = from + limit < all.length;
    return { status: 200, body: { [resource]: page.map(strip), meta: { cursors: { before: from ? page[0]?.id ?? null : null, after: more ? page.at(-1)!.id : null }, limit } } };
  }

  /** GoCardless keeps every creation under its key: a key used before answers the conflict naming what it created. */
  private createOnce(resource: Resource, key: string | undefined, data: Record<string, any> | undefined): Answer {
    const held = key && this.keys.get(key);
    if (held) {
      return error(409, 'invalid_state', 'A resource has already been created with this idempotency key', [
        { reason: 'idempotent_creation_conflict', message: 'A resource has already been created with this idempotency key', links: { conflicting_resource_id: held.id } },
      ]);
    }
    if (!data) return error(400, 'invalid_api_usage', `The request body must be wrapped in "${resource}"`, [{ reason: 'invalid_document_structure' }]);
    const problem = this.invalid(resource, data);
    if (problem) return problem;
    const object = { ...this.build(resource, data), id: newId(PREFIX[resource]), created_at: new Date().toISOString(), metadata: data.metadata ?? {}, _order: this.order++ } as unknown as Stored;
    this.objects[resource].set(object.id, object);
    if (key) this.keys.set(key, { resource, id: object.id });
    return { status: 201, body: { [resource]: strip(object) } };
  }

  private invalid(resource: Resource, data: Record<string, any>): Answer | undefined {
    const field = (name: string, message: string) => error(422, 'validation_failed', 'Validation failed', [{ field: name, message, request_pointer: `/${resource}/${name}` }]);
    if (resource === 'customers' && !data.email) return field('email', 'is required');
    if (resource === 'customers' && !data.company_name && !(data.given_name && data.family_name)) return field('given_name', 'or company_name is required');
    if (resource === 'customer_bank_accounts') {
      if (!this.objects.customers.has(data.links?.customer)) return field('links.customer', 'does not exist');
      if (!data.iban && !(data.account_number && (data.branch_code || data.bank_code))) return field('iban', 'or local details are required');
      if (!data.account_holder_name || data.account_holder_name.length > 18) return field('account_holder_name', 'is required, at most 18 characters');
    }
    if (resource === 'mandates' && !this.objects.customer_bank_accounts.has(data.links?.customer_bank_account)) return field('links.customer_bank_account', 'does not exist');
    if (resource === 'mandates' && !['bacs', 'sepa_core', 'ach'].includes(data.scheme)) return field('scheme', 'is not supported');
    if (resource === 'payments') {
      const mandate = this.objects.mandates.get(data.links?.mandate) as Mandate | undefined;
      if (!mandate) return field('links.mandate', 'does not exist');
      if (!Number.isInteger(data.amount) || data.amount < 1) return field('amount', 'must be a positive integer');
      if (['cancelled', 'failed', 'expired', 'consumed', 'blocked'].includes(mandate.status!)) {
        return error(422, 'invalid_state', 'Mandate is not active', [{ reason: 'mandate_is_inactive', message: 'The mandate is not active', links: { mandate: mandate.id } }]);
      }
    }
    return undefined;
  }

  private build(resource: Resource, data: Record<string, any>): Partial<Stored> {
    switch (resource) {
      case 'customers':
        return { email: data.email, given_name: data.given_name ?? null, family_name: data.family_name ?? null, company_name: data.company_name ?? null } as Customer;
      case 'customer_bank_accounts':
        return {
          account_holder_name: data.account_holder_name,
          account_number_ending: String(data.iban ?? data.account_number).slice(-2),
          country_code: data.country_code,
          currency: data.currency,
          enabled: true,
          links: { customer: data.links.customer },
        } as CustomerBankAccount;
      case 'mandates': {
        const account = this.objects.customer_bank_accounts.get(data.links.customer_bank_account) as CustomerBankAccount;
        return { scheme: data.scheme, status: 'pending_submission', reference: newId('REF-'), links: { customer_bank_account: account.id, customer: account.links!.customer, creditor: 'CR123' } } as Mandate;
      }
      case 'payments':
        return { amount: data.amount, amount_refunded: 0, currency: data.currency, status: 'pending_submission', charge_date: new Date().toISOString().slice(0, 10), links: { mandate: data.links.mandate, creditor: 'CR123' } } as Payment;
    }
  }

  private cancel(id: string): Answer {
    const mandate = this.objects.mandates.get(id) as Mandate | undefined;
    if (!mandate) return error(404, 'invalid_api_usage', 'Resource not found', [{ reason: 'resource_not_found' }]);
    if (!['pending_customer_approval', 'pending_submission', 'submitted', 'active', 'suspended_by_payer'].includes(mandate.status!)) {
      return error(422, 'invalid_state', 'Mandate cannot be cancelled', [{ reason: 'cancellation_failed', message: `Mandate is ${mandate.status}` }]);
    }
    mandate.status = 'cancelled';
    return { status: 200, body: { mandates: strip(mandate as Stored) } };
  }
}

/** A webhook as GoCardless sends it: a batch of events, signed with the endpoint's secret. */
export function gocardlessWebhook(events: Event[], secret: string): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({ events, meta: { webhook_id: newId('WB') } });
  const signature = crypto.createHmac('sha256', secret).update(body).digest('hex');
  return { body, headers: { 'content-type': 'application/json', 'webhook-signature': signature } };
}

function strip(object: Stored): Stored {
  return Object.fromEntries(Object.entries(object).filter(([key]) => !key.startsWith('_'))) as Stored;
}
