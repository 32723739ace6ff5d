// The saved-card scenario of `npm run bench -- payments`: POST /v1/payments charging a saved card
// off session (`off_session: true`, docs/customers.md "Paying with a saved card") through the
// general movement path (src/movement/engine.ts), against pgbench on the very statements it sends.
//
// Set-up, through the service's own API: customers, each with saved cards made the way the service
// makes them (POST /v1/payment-methods, verified by the in-process simulator), and open orders.
// The load spreads its payments over every card, so that no card's rows are hot.
//
// The ceiling: at the start of the run the service is started in this process on a database of
// its own (bench/lib/trace.ts), one off-session payment is traced, and the pgbench script is built
// from those statements (bench/lib/pgbench-script.ts): the same texts, in the same transactions,
// every id fresh per transaction, the card drawn from the bench's saved cards. The simulated
// processor's own statements (simulator_* tables) are left out, as the typed-card script has
// none: they are the processor's work, not ours. SAVED_CARD_STATEMENTS below is what the script
// was reviewed against; when the service's statements change, the run stops and says how.
import { parseId, toPublicId } from '../src/kernel/ids.js';
import type { BenchDatabase } from './lib/database.js';
import { runPgbench } from './lib/pgbench.js';
import { AMOUNT, BALANCES, KEY, ORDER, REQ, TEST_CARD, payLoad, publicIdOfOrder } from './lib/payment-load.js';
import type { Scenario } from './lib/payment-scenario.js';
import { parameterTypes, scriptFromTrace, type BuiltScript } from './lib/pgbench-script.js';
import { describeTrace, postJson, startTracedService, traceStatements, type TracedStatement } from './lib/trace.js';
import type { BenchOptions } from './lib/types.js';

export const CUSTOMERS = 8;
export const CARDS_PER_CUSTOMER = 4;
/** pgbench's run numbers for this scenario start here (the typed-card scenario's start at 1). */
export const SAVED_PGBENCH_FIRST_RUN = 1001;
export const SAVED_CHARGE_PREFIX = 'simulator_a_ch_saved';

/**
 * What one off-session payment sends, in order (verb and table of each statement): reviewed
 * against the script's bindings and overrides. A change here means reviewing them again.
 */
export const SAVED_CARD_STATEMENTS = [
  // The fast path (src/domain/payments/one-statement.ts): the saved card read and checked, then the
  // order read (with other requests' reads, so from an unnest of their ids), then phase 1 in one
  // statement (the key claimed in it).
  'select payment_methods',
  'select unnest',
  'with unnest',
  // The card unsealed and its audit row written by one statement (src/vault/vault.ts).
  'with vault_records',
  // The card-network reattempt check of an off-session payment (src/domain/payments/reattempts.ts):
  // a read of the card's recent declines, without a lock; a card with none (as here) is no reattempt.
  'select card_reattempts',
  // Phase 3 in one statement (src/domain/payments/finish-at-once.ts).
  'with unnest',
]

/** A statement's verb and first table, e.g. `select payment_orders for update`. */
export function statementSummary(text: string): string {
  const t = text.replace(/\s+/g, ' ').trim().replace(/"/g, '').toLowerCase();
  const verb = t.split(' ')[0]!;
  const table = /\b(?:into|from|update)\s+([a-z_]+)/.exec(t)?.[1] ?? '';
  return `${verb}${table ? ` ${table}` : ''}${/\bfor update\b/.test(t) ? ' for update' : ''}`;
}

const isProcessors = (s: TracedStatement) => /\bsimulator_(objects|reports)\b/.test(s.text);

export interface SavedCard {
  id: string;
  uuid: string;
  /** The vault record's public id (`vr_…`), as the method keeps it. */
  vaultRecord: string;
  networkTransactionId: string;
}

/** Customers and their saved cards, made through the service's API; then their ids for pgbench. */
export async function saveCards(db: BenchDatabase, url: string, secret: string): Promise<SavedCard[]> {
  for (let c = 0; c < CUSTOMERS; c++) {
    const customer = await postJson(url, secret, '/v1/customers', { email: `bench-${c}@example.com`, name: `Customer ${c}` });
    if (customer.status !== 201) throw new Error(`creating a customer answered ${customer.status}: ${JSON.stringify(customer.body)}`);
    for (let k = 0; k < CARDS_PER_CUSTOMER; k++) {
      const pm = await postJson(url, secret, '/v1/payment-methods', { customer: customer.body.id, card: TEST_CARD, usage: 'off_session', currency: 'EUR' });
      if (pm.status !== 201 || pm.body.status !== 'active') throw new Error(`saving a card answered ${pm.status}: ${JSON.stringify(pm.body)}`);
    }
  }
  const rows = await db.query<{ id: string; vault_record_id: string; network_transaction_id: string }>(
    `SELECT id, vault_record_id, network_transaction_id FROM payment_methods WHERE status = 'active' AND usage = 'off_session' ORDER BY id`,
  );
  if (rows.length !== CUSTOMERS * CARDS_PER_CUSTOMER || rows.some((r) => !r.network_transaction_id)) {
    throw new Error(`expected ${CUSTOMERS * CARDS_PER_CUSTOMER} active saved cards with a network transaction id, found ${rows.length}`);
  }
  return rows.map((r) => ({ id: toPublicId('pm', r.id), uuid: r.id, vaultRecord: r.vault_record_id, networkTransactionId: r.network_transaction_id }));
}

/** Traces one off-session payment with a saved card on a service of its own, checks its statements, builds the script. */
export async function savedCardScript(adminUrl: string): Promise<BuiltScript & { trace: string }> {
  const svc = await startTracedService(adminUrl);
  try {
    const post = async (path: string, body: unknown) => {
      const res = await postJson(svc.url, svc.secret, path, body);
      if (res.status !== 201) throw new Error(`trace: POST ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const customer = await post('/v1/customers', { email: 'trace@example.com' });
    const pm = await post('/v1/payment-methods', { customer: customer.id, card: TEST_CARD, usage: 'off_session', currency: 'EUR' });
    const order = () => post('/v1/payment-orders', { amount: AMOUNT, currency: 'EUR', reference: `trace-${Math.random()}`, customer: { id: customer.id } });
    const body = (o: Record<string, unknown>) => ({ payment_order: o.id, payment_method: { type: 'saved_card', saved_card: { id: pm.id } }, off_session: true, off_session_reason: 'unscheduled' });
    await post('/v1/payments', body(await order())); // warms the key cache and the pool's prepared statements
    // A statement of the service's background work may fall inside the trace: up to three tries.
    const traced = async () => {
      const next = await order();
      const { result, statements: all } = await traceStatements(() => post('/v1/payments', body(next)));
      const statements = all.filter((s) => !isProcessors(s));
      return { next, result, statements, shapes: statements.map((s) => statementSummary(s.text)) };
    };
    let attempt = await traced();
    for (let tries = 1; tries < 3 && attempt.shapes.join('\n') !== SAVED_CARD_STATEMENTS.join('\n'); tries++) attempt = await traced();
    const { next, result, statements, shapes } = attempt;
    if (shapes.join('\n') !== SAVED_CARD_STATEMENTS.join('\n')) {
      throw new Error(
        `the statements of an off-session saved-card payment changed: review the pgbench script's bindings and overrides in bench/payments-saved.ts, ` +
          `then update SAVED_CARD_STATEMENTS.\nexpected:\n  ${SAVED_CARD_STATEMENTS.join('\n  ')}\nsent:\n  ${shapes.join('\n  ')}\n\n${describeTrace(statements)}`,
      );
    }
    const [account] = await svc.query<{ id: string }>('SELECT id FROM accounts LIMIT 1');
    const [card] = await svc.query<{ id: string; vault_record_id: string; network_transaction_id: string }>(
      'SELECT id, vault_record_id, network_transaction_id FROM payment_methods',
    );
    const [key] = await svc.query<{ key: string; request_id: string }>(`SELECT key, request_id FROM idempotency_keys WHERE response_body LIKE $1`, [
      `%"id":"${result.id as string}"%`,
    ]);
    // The order's read takes a batch of ids: this request's is the only one.
    const orderUuid = (statements.find((s) => statementSummary(s.text) === 'select unnest')!.values[2] as string[])[0]!;
    const built = scriptFromTrace({
      statements,
      types: await parameterTypes(svc.databaseUrl, statements),
      bindings: {
        [account!.id]: ':acct',
        [orderUuid]: ORDER,
        [next.id as string]: publicIdOfOrder('ord'),
        [key!.key]: KEY,
        [key!.request_id]: REQ,
        [card!.id]: ':pm',
        // The method keeps its vault record's public id; the vault's rows are keyed by the uuid.
        [card!.vault_record_id]: ':vr_public',
        [parseId('vr', card!.vault_record_id)!]: ':vr',
        [card!.network_transaction_id]: ':ntid',
        [customer.id as string]: `'${customer.id as string}'`,
      },
      freshPublicId: publicIdOfOrder,
      freshChargeReference: `('${SAVED_CHARGE_PREFIX}' || :r::text)`,
      // The ledger spreads a balance over slots so that payments do not queue on one row.
      // Phase 3 takes a batch of payments: its balances column ($15) is an array of one payment's.
      overrides: [{ statement: /INSERT INTO ledger_balances/, params: { 15: `ARRAY[${BALANCES}]` } }],
      preamble: ['\\set n :n + 1', '\\set r random(1, 9000000000000000000)', '\\set k random(1, :ncards)', '\\set s1 random(0, 15)', '\\set s2 random(0, 15)'],
      gsetColumns: ['(:pm_ids::uuid[])[:k] AS pm', '(:vr_ids::uuid[])[:k] AS vr', '(:vr_publics::text[])[:k] AS vr_public', '(:ntids::text[])[:k] AS ntid'],
    });
    return { ...built, trace: describeTrace(statements) };
  } finally {
    await svc.close();
  }
}

/** The scenario: pays `orderIds` off session, cycling over `cards`; pgbench on the traced statements. */
export function savedCardScenario(
  opts: BenchOptions,
  db: BenchDatabase,
  service: { url: string; secret: string; accountUuid: string },
  cards: SavedCard[],
  nextOrder: () => string,
  built: BuiltScript,
): Scenario {
  let i = 0;
  let run = SAVED_PGBENCH_FIRST_RUN - 1;
  const body = () => ({
    payment_order: nextOrder(),
    payment_method: { type: 'saved_card', saved_card: { id: cards[i++ % cards.length]!.id } },
    off_session: true,
    off_session_reason: 'unscheduled',
  });
  const array = (xs: string[]) => `{${xs.join(',')}}`;
  return {
    label: 'saved card off session',
    load: (durationS) => payLoad(service.url, service.secret, opts.connections, durationS, body),
    pgbench: async () => (durationS) =>
      runPgbench({
        url: db.url,
        script: built.script,
        clients: opts.connections,
        threads: opts.pgbenchThreads,
        durationS,
        vars: {
          ...built.vars,
          acct: service.accountUuid,
          run: String(++run),
          n: '0',
          ncards: String(cards.length),
          pm_ids: array(cards.map((c) => c.uuid)),
          vr_ids: array(cards.map((c) => parseId('vr', c.vaultRecord)!)),
          vr_publics: array(cards.map((c) => c.vaultRecord)),
          ntids: array(cards.map((c) => c.networkTransactionId)),
        },
        protocol: opts.pgbenchProtocol ?? 'prepared',
      }),
  };
}

