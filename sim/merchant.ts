// What a simulated merchant is and knows (sim/ops.ts and the ops beside it draw on it), and how it
// sends a money-moving POST: under an Idempotency-Key that may be sent again later, whatever
// became of the first try, the answer recorded for the invariants.
import type { CrashPoint } from '../src/config/payments.js';
import type { Rng } from './rng.js';
import type { Answer, SimService } from './service.js';

export interface Merchant {
  name: string;
  accountId: string;
  key: string;
  orders: string[];
  payments: { id: string; amount: number; succeeded?: boolean; authorized?: boolean }[];
  beneficiaries: { id: string; currency: string }[];
  mandates: string[];
  endpoints: string[];
  customers: string[];
  /** Cards saved for off-session use (pm_), by paying with setup_future_usage. */
  savedCards: string[];
  /** Its simulator connector accounts (ca_), reconciled every simulated night. */
  connectorAccounts: { id: string; connector: string }[];
}

export interface Sent {
  merchant: Merchant;
  path: string;
  body: unknown;
  idempotencyKey: string;
  /** The answer that reached the merchant (undefined: the process died with the request). */
  answer?: Answer;
  /** When it was answered (sim clock, ms): past the key's retention a retry is a new request. */
  answeredAtMs?: number;
}

/** What the run learned from answers, for the invariants. */
export interface Model {
  merchants: Merchant[];
  sent: Sent[];
  /** Objects whose creation or change a merchant saw acknowledged (2xx): their id and the version seen. */
  acknowledged: Map<string, { object: string; version: number }>;
  violations: string[];
  /** Answers that should have been refusals, or refusals that should not have been (refunds of disputed payments, routing rules). */
  wrongAnswers: string[];
  /** Requests whose answer never came (a crash) or said to try again (409, 5xx): retried first. */
  unanswered: Sent[];
  keySeq: number;
}

export function record(model: Model, answer: Answer) {
  const body = answer.body as { id?: string; object?: string; version?: number } | undefined;
  if (answer.status >= 300 || !body?.id || !body.object) return;
  const seen = model.acknowledged.get(body.id);
  model.acknowledged.set(body.id, { object: body.object, version: Math.max(seen?.version ?? 0, body.version ?? 0) });
}

export async function post(s: SimService, model: Model, rng: Rng, m: Merchant, path: string, body: unknown, crashAt?: CrashPoint): Promise<Answer | undefined> {
  const sent: Sent = { merchant: m, path, body, idempotencyKey: `k${(model.keySeq += 1)}` };
  model.sent.push(sent);
  const answer = await s.request('POST', path, { key: m.key, body, idempotencyKey: sent.idempotencyKey, crashAt });
  if (answer === 'crashed') {
    model.unanswered.push(sent);
    return undefined;
  }
  sent.answer = answer;
  sent.answeredAtMs = Date.now();
  record(model, answer);
  return answer;
}

export const card = (number: string) => ({ type: 'card', card: { number, exp_month: 12, exp_year: 2035, cvc: '123' } });

/** `crash`: the process is to die inside this request, at a crash point the request reaches (or just before it answers). */
export type Op = (s: SimService, model: Model, rng: Rng, m: Merchant, crash: boolean) => Promise<void>;

export const at = (rng: Rng, crash: boolean, points: readonly CrashPoint[]) => (crash ? rng.pick(points) : undefined);
