// A fake Adyen Transfers API v4 (the balance platform) on a local port, for the payout operations
// the connector uses: POST /btl/v4/transfers, GET /btl/v4/transfers/{id} and GET
// /btl/v4/transfers?reference=…. Every request is validated against Adyen's published document
// (test/support/fixtures/adyen/TransferService-v4.json): a body that does not match TransferInfo, or a list
// query without its required parameters, is answered 422 and kept in `invalid`. It behaves as Adyen
// documents: an X-API-Key, an Idempotency-Key whose first answer is replayed, a transfer answered
// `received` (202) whose outcome comes later — booked, failed, returned — by balance platform
// webhooks (balancePlatform.transfer.updated), their `data` checked against TransferData and
// signed with the SDK's HMAC over the raw body (HmacSignature header). Faults as the other fakes.
import crypto from 'node:crypto';
import http from 'node:http';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { adyenHmac as hmac } from '../../../src/connectors/adyen/hmac.js';
import { FakeProcessor } from './processor.js';
import transfers from '../fixtures/adyen/TransferService-v4.json' with { type: 'json' };

type Obj = Record<string, any>;
type Answer = { status: number; body: Obj };
export type Fault = '429' | '500_after' | 'drop_after' | 'hang_after';
export type TransferOutcome = 'booked' | 'failed' | 'returned' | 'refused';

const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
for (const name of ['int32', 'int64']) ajv.addFormat(name, { type: 'number', validate: Number.isInteger });
ajv.addSchema(transfers, 'transfers');
const validator = (ref: string) => ajv.compile({ $ref: `transfers#/components/schemas/${ref}` });
const TRANSFER_INFO = validator('TransferInfo');
const TRANSFER = validator('Transfer');
const TRANSFER_DATA = validator('TransferData');
const FIND_RESPONSE = validator('FindTransfersResponse');
const example = (name: string): Obj => structuredClone((transfers.components.examples as Obj)[name].value);

const problem = (status: number, errorCode: string, detail: string): Answer => ({
  status,
  body: { type: 'https://docs.adyen.com/errors/general/', title: status === 401 ? 'Unauthorized' : 'Invalid request', status, detail, errorCode },
});
const transferId = () => crypto.randomBytes(8).toString('hex').toUpperCase();

export interface FakeTransfer extends Obj {
  id: string;
  reference: string;
  status: string;
  reason: string;
  sequenceNumber: number;
  events: Obj[];
}

export class FakeAdyenTransfers extends FakeProcessor<Fault> {
  readonly transfers = new Map<string, FakeTransfer>();
  readonly requests: { method: string; path: string; body: Obj | undefined; key: string | undefined }[] = [];
  readonly invalid: { path: string; errors: unknown }[] = [];
  private readonly keys = new Map<string, Answer>();

  /** The transfers held under our reference (our payout id). */
  held(reference: string): FakeTransfer[] {
    return [...this.transfers.values()].filter((t) => t.reference === reference);
  }

  /** POST /transfers requests received under our reference, replays included. */
  sent(reference: string): number {
    return this.requests.filter((r) => r.method === 'POST' && r.body?.reference === reference).length;
  }

  /** Moves a transfer on, as Adyen's balance platform does: each change numbered and kept in its events. */
  settle(id: string, outcome: TransferOutcome, reason?: string): FakeTransfer {
    const t = this.transfers.get(id)!;
    const change = (status: string, why: string) => {
      t.status = status;
      t.reason = why;
      t.sequenceNumber += 1;
      t.events.push({ id: `EV${transferId()}`, status, reason: why, type: 'accounting', bookingDate: new Date().toISOString() });
    };
    if (outcome === 'refused') change('refused', reason ?? 'declinedByTransactionRule');
    else if (outcome === 'failed') change('failed', reason ?? 'refusedByCounterpartyBank');
    else {
      if (t.status !== 'booked') change('booked', 'approved');
      if (outcome === 'returned') change('returned', reason ?? 'counterpartyAccountClosed');
    }
    return t;
  }

  /**
   * The balance platform webhook of the transfer as it stands now (or as `at`, an earlier snapshot),
   * signed with `hmacKey` (hex) by the SDK; `data` checked against Adyen's TransferData.
   */
  webhook(transfer: FakeTransfer, hmacKey: string, live = false): { body: string; headers: Record<string, string> } {
    const { events, ...rest } = structuredClone(transfer);
    const data = { ...rest, events, balancePlatform: 'YOUR_BALANCE_PLATFORM', creationDate: rest.creationDate };
    if (!TRANSFER_DATA(data)) throw new Error(`the fake built transfer webhook data off Adyen's schema: ${ajv.errorsText(TRANSFER_DATA.errors)}`);
    const type = transfer.sequenceNumber === 1 ? 'balancePlatform.transfer.created' : 'balancePlatform.transfer.updated';
    const body = JSON.stringify({ data, environment: live ? 'live' : 'test', timestamp: new Date().toISOString(), type });
    return { body, headers: { 'content-type': 'application/json', HmacSignature: hmac.calculateHmac(body, hmacKey) } };
  }

  protected async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let text = '';
    for await (const chunk of req) text += chunk;
    const send = (answer: Answer) => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    const url = new URL(req.url!, 'http://adyen');
    let body: Obj | undefined;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      return void send(problem(422, '00_400', 'The request body is not JSON'));
    }
    const key = req.headers['idempotency-key'] as string | undefined;
    this.requests.push({ method: req.method!, path: url.pathname, body, key });
    if (!req.headers['x-api-key']) return void send(problem(401, '00_401', 'Not allowed'));
    const fault = this.faults.shift();
    if (fault === '429') return void send(problem(429, '00_429', 'Too many requests'));
    const held = key ? this.keys.get(key) : undefined;
    const answer = held ?? this.act(req.method!, url, body);
    if (key && !held && answer.status < 500) this.keys.set(key, answer);
    if (fault === '500_after') return void send(problem(500, '00_500', 'Internal error'));
    if (fault === 'drop_after') return void req.socket.destroy();
    if (fault === 'hang_after') return;
    send(answer);
  }

  private act(method: string, url: URL, body: Obj | undefined): Answer {
    const one = /^\/btl\/v4\/transfers\/([^/]+)$/.exec(url.pathname);
    if (method === 'POST' && url.pathname === '/btl/v4/transfers') return this.create(url.pathname, body ?? {});
    if (method === 'GET' && url.pathname === '/btl/v4/transfers') return this.find(url);
    if (method === 'GET' && one) {
      const t = this.transfers.get(decodeURIComponent(one[1]!));
      if (!t) return problem(404, '30_112', 'Transfer not found');
      const { events: _events, sequenceNumber: _seq, ...transfer } = t;
      if (!TRANSFER(transfer)) throw new Error(`the fake answered off Adyen's schema: ${ajv.errorsText(TRANSFER.errors)}`);
      return { status: 200, body: transfer };
    }
    return problem(422, '00_422', `Unknown operation ${method} ${url.pathname}`);
  }

  private create(path: string, body: Obj): Answer {
    if (!TRANSFER_INFO(body)) {
      this.invalid.push({ path, errors: TRANSFER_INFO.errors });
      return problem(422, '30_000', `Structure of TransferInfo is invalid: ${ajv.errorsText(TRANSFER_INFO.errors)}`);
    }
    const base = example('post-transfers-payout-local-transfer-sepa-202');
    const id = transferId();
    const transfer: FakeTransfer = {
      ...base,
      id,
      amount: body.amount,
      balanceAccount: { ...base.balanceAccount, id: body.balanceAccountId },
      counterparty: body.counterparty,
      categoryData: { priority: body.priority, type: 'bank' },
      reference: body.reference,
      referenceForBeneficiary: body.referenceForBeneficiary ?? body.reference,
      description: body.description ?? base.description,
      creationDate: new Date().toISOString(),
      status: 'received',
      reason: 'pending',
      sequenceNumber: 1,
      events: [{ id: `EV${transferId()}`, status: 'received', reason: 'pending', type: 'accounting', bookingDate: new Date().toISOString() }],
    };
    this.transfers.set(id, transfer);
    const { events: _events, sequenceNumber: _seq, ...answer } = transfer;
    if (!TRANSFER(answer)) throw new Error(`the fake answered off Adyen's schema: ${ajv.errorsText(TRANSFER.errors)}`);
    return { status: 202, body: answer };
  }

  private find(url: URL): Answer {
    const q = Object.fromEntries(url.searchParams);
    const missing = ['createdSince', 'createdUntil'].filter((p) => !q[p]);
    if (missing.length || !(q.balanceAccountId || q.accountHolderId || q.balancePlatform)) {
      this.invalid.push({ path: url.pathname, errors: { missing } });
      return problem(422, '00_422', `Missing query parameters: ${missing.join(', ') || 'balanceAccountId'}`);
    }
    const since = Date.parse(q.createdSince!);
    const until = Date.parse(q.createdUntil!);
    const data = [...this.transfers.values()]
      .filter((t) => (!q.reference || t.reference === q.reference) && (!q.balanceAccountId || t.balanceAccount.id === q.balanceAccountId))
      .filter((t) => Date.parse(t.creationDate) >= since && Date.parse(t.creationDate) <= until)
      .map(({ sequenceNumber: _seq, ...t }) => ({ ...t, balancePlatform: 'YOUR_BALANCE_PLATFORM' }));
    const answer = { data, _links: {} };
    if (!FIND_RESPONSE(answer)) throw new Error(`the fake answered off Adyen's schema: ${ajv.errorsText(FIND_RESPONSE.errors)}`);
    return { status: 200, body: answer };
  }
}
