// A fake Adyen Disputes API v30 (its own host, as ADYEN_DISPUTE_BASE_URL names it) on a local port,
// for the operations the connector uses: retrieveApplicableDefenseReasons, supplyDefenseDocument,
// defendDispute and acceptDispute under /ca/services/DisputeService/v30. Every request body is
// validated against Adyen's published document (test/support/fixtures/adyen/DisputeService-v30.json):
// one that does not match is answered 422 and kept in `invalid`. It behaves as Adyen documents:
// an X-API-Key, the merchant account that holds the dispute, defense reasons per dispute (from
// the document's example), a document checked to be a well-formed PDF (header, cross-reference
// offsets, trailer) before it is kept, a defense only with a reason that applies and once its
// required document is supplied, a dispute answered once (success false afterwards); an
// Idempotency-Key's first answer replayed. Answers start from the document's examples and are
// checked against it. Faults as the other fakes.
import http from 'node:http';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { FakeProcessor } from './processor.js';
import disputes from '../fixtures/adyen/DisputeService-v30.json' with { type: 'json' };

type Obj = Record<string, any>;
type Answer = { status: number; body: Obj };
export type Fault = '429' | '500_after' | 'drop_after';

const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
ajv.addSchema(disputes, 'disputes');
const validator = (ref: string) => ajv.compile({ $ref: `disputes#/components/schemas/${ref}` });
const OPERATIONS = {
  retrieveApplicableDefenseReasons: { request: validator('DefenseReasonsRequest'), response: validator('DefenseReasonsResponse') },
  supplyDefenseDocument: { request: validator('SupplyDefenseDocumentRequest'), response: validator('SupplyDefenseDocumentResponse') },
  defendDispute: { request: validator('DefendDisputeRequest'), response: validator('DefendDisputeResponse') },
  acceptDispute: { request: validator('AcceptDisputeRequest'), response: validator('AcceptDisputeResponse') },
} as const;
const example = (name: string): Obj => structuredClone((disputes.components.examples as Obj)[name].value);
const PATH = /^\/ca\/services\/DisputeService\/v30\/(\w+)$/;
const result = (success: boolean, errorMessage?: string): Answer => ({ status: 200, body: { disputeServiceResult: { success, ...(errorMessage ? { errorMessage } : {}) } } });

/** Whether `pdf` is a well-formed PDF file: its header, each cross-reference offset at its object, startxref at the table. */
export function wellFormedPdf(pdf: Buffer): boolean {
  const text = pdf.toString('latin1');
  if (!text.startsWith('%PDF-1.') || !text.trimEnd().endsWith('%%EOF')) return false;
  const start = Number(/startxref\n(\d+)\n%%EOF\s*$/.exec(text)?.[1]);
  if (!Number.isInteger(start) || !text.startsWith('xref\n', start)) return false;
  const [, first, count] = /^xref\n(\d+) (\d+)\n/.exec(text.slice(start)) ?? [];
  const entries = text.slice(start).split('\n').slice(2, 2 + Number(count));
  return Number(first) === 0 && entries.slice(1).every((entry, i) => text.startsWith(`${i + 1} 0 obj`, Number(entry.slice(0, 10)))) && /trailer\n<< \/Size \d+ \/Root 1 0 R >>/.test(text);
}

export interface FakeDispute {
  merchantAccount: string;
  defenseReasons: Obj[];
  documents: Obj[];
  state: 'open' | 'defended' | 'accepted';
  defenseReasonCode?: string;
}

export class FakeAdyenDisputes extends FakeProcessor<Fault> {
  readonly disputes = new Map<string, FakeDispute>();
  readonly requests: { operation: string; body: Obj; key: string | undefined }[] = [];
  readonly invalid: { operation: string; errors: unknown }[] = [];
  private readonly keys = new Map<string, Answer>();
  /** Adyen does not document Idempotency-Key on this API: false plays an Adyen that ignores it (every request acts). */
  honoursIdempotencyKeys = true;

  /** A dispute Adyen holds for `merchantAccount`, with the defense reasons of the document's example. */
  open(disputePspReference: string, merchantAccount: string): FakeDispute {
    const dispute: FakeDispute = { merchantAccount, defenseReasons: example('post-retrieveApplicableDefenseReasons-retrieve-defense-reasons-200').defenseReasons, documents: [], state: 'open' };
    this.disputes.set(disputePspReference, dispute);
    return dispute;
  }

  /** Calls of `operation`, replays included. */
  calls(operation: keyof typeof OPERATIONS): Obj[] {
    return this.requests.filter((r) => r.operation === operation).map((r) => r.body);
  }

  protected async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let text = '';
    for await (const chunk of req) text += chunk;
    const send = (answer: Answer) => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    const operation = PATH.exec(new URL(req.url!, 'http://adyen').pathname)?.[1] as keyof typeof OPERATIONS | undefined;
    if (!operation || !(operation in OPERATIONS)) return void send({ status: 404, body: { status: 404, errorCode: '000', message: 'Not found', errorType: 'validation' } });
    let body: Obj;
    try {
      body = JSON.parse(text);
    } catch {
      return void send({ status: 400, body: { status: 400, errorCode: '702', message: 'Unexpected input', errorType: 'validation' } });
    }
    const key = req.headers['idempotency-key'] as string | undefined;
    this.requests.push({ operation, body, key });
    if (!req.headers['x-api-key']) return void send({ status: 401, body: { status: 401, errorCode: '000', message: 'HTTP Status Response - Unauthorized', errorType: 'security' } });
    const fault = this.faults.shift();
    if (fault === '429') return void send({ status: 429, body: { status: 429, errorCode: '429', message: 'Too many requests', errorType: 'security' } });
    const held = key && this.honoursIdempotencyKeys ? this.keys.get(key) : undefined;
    const answer = held ?? this.act(operation, body);
    if (key && !held && answer.status < 500) this.keys.set(key, answer);
    if (fault === '500_after') return void send({ status: 500, body: { status: 500, errorCode: '905', message: 'Internal error', errorType: 'internal' } });
    if (fault === 'drop_after') return void req.socket.destroy();
    send(answer);
  }

  private act(operation: keyof typeof OPERATIONS, body: Obj): Answer {
    const { request, response } = OPERATIONS[operation];
    if (!request(body)) {
      this.invalid.push({ operation, errors: request.errors });
      return { status: 422, body: { status: 422, errorCode: '702', message: `Structure of ${operation} request is invalid: ${ajv.errorsText(request.errors)}`, errorType: 'validation' } };
    }
    const answer = this.answer(operation, body);
    if (answer.status === 200 && !response(answer.body)) throw new Error(`the fake answered off Adyen's schema: ${ajv.errorsText(response.errors)}`);
    return answer;
  }

  private answer(operation: keyof typeof OPERATIONS, body: Obj): Answer {
    const dispute = this.disputes.get(body.disputePspReference);
    if (!dispute || dispute.merchantAccount !== body.merchantAccountCode) return result(false, 'Could not find dispute');
    if (operation === 'retrieveApplicableDefenseReasons') return { status: 200, body: { ...result(true).body, defenseReasons: dispute.defenseReasons } };
    if (dispute.state !== 'open') return result(false, `Dispute is already ${dispute.state}`);
    if (operation === 'acceptDispute') {
      dispute.state = 'accepted';
      return result(true);
    }
    if (operation === 'supplyDefenseDocument') {
      const bad = body.defenseDocuments.find((d: Obj) => d.contentType !== 'application/pdf' || !wellFormedPdf(Buffer.from(d.content, 'base64')));
      if (bad) return result(false, 'Invalid defense document');
      dispute.documents.push(...body.defenseDocuments);
      return result(true);
    }
    const reason = dispute.defenseReasons.find((r) => r.defenseReasonCode === body.defenseReasonCode);
    if (!reason) return result(false, 'Invalid defense reason code');
    const required = (reason.defenseDocumentTypes ?? []).filter((t: Obj) => t.requirementLevel === 'Required').map((t: Obj) => t.defenseDocumentTypeCode);
    if (!required.every((code: string) => dispute.documents.some((d) => d.defenseDocumentTypeCode === code))) return result(false, 'Required defense documents are missing');
    Object.assign(dispute, { state: 'defended', defenseReasonCode: body.defenseReasonCode });
    return result(true);
  }
}
