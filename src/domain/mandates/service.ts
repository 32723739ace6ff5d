// Mandates: a customer's authorisation to debit their bank account, registered with the customer's
// bank through a connector in atomic phases, like payments (API.md §4):
//
//   1. one transaction: insert the mandate `pending` (account number sealed, only last4 and the
//      keyed fingerprint in clear), fix the route, write `mandate.created` and the recovery point
//      `mandate_created:<id>` on the idempotency key;
//   2. no transaction open: ask the route's connectors to set it up, the mandate id being the
//      processor's idempotency key; a processor error falls back to the next connector;
//   3. one transaction: apply the answer (active, failed, or pending for a later answer) and
//      store the response on the key.
//
// A retry after a crash between 1 and 3 resumes: it first asks the route's connectors whether one
// already holds the mandate (adopting it), and sets it up only when none does. The account number
// is read back from its sealed column for that, never from logs or the idempotency record.
import { connectorThatMayHaveActed } from '../../connectors/router.js';
import { settleThroughTestControl } from '../test-controls.js';
import crypto from 'node:crypto';
import { and, eq, type SQL } from 'drizzle-orm';
import type { Db, Executor } from '../../storage/db.js';
import { mandates } from '../../storage/schema.js';
import { newId, parseId, toPublicId } from '../../kernel/ids.js';
import { ApiError, invalidState } from '../../kernel/errors.js';
import type { Encryptor } from '../../lib/encryption.js';
import {
  bankAccountFingerprint,
  bankAccountView,
  openBankAccountSecret,
  SEPA_COUNTRIES,
  sealBankAccountSecret,
  validateBankAccount,
  type ValidBankAccount,
} from '../../lib/bank-accounts.js';
import { respond, setRecoveryPoint } from '../../idempotency/store.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import { recordEvent } from '../events/service.js';
import { notFound } from '../../kernel/lookup.js';
import { planPage, toPage, type Page } from '../../kernel/pagination.js';
import { routingRules, usableConnectors } from '../routing/service.js';
import { attemptOf, callConnector, orderConnectors, ruleMatches, type Attempt, type Guarded, type RoutingRule } from '../../connectors/router.js';
import {
  isRetryable,
  type MandateFailureCode,
  type MandateResult,
  type MandateScheme,
  type MandateSetupRequest,
  type MandateState,
} from '../../connectors/types.js';
import { testHelpersOnly } from '../../ledger/balance.js';
import type { PaymentsRuntime } from '../payments/runtime.js';
import { abandonAfterMs } from '../payments/service.js';
import { accountFingerprintKey } from '../beneficiaries/service.js';
import type { CreateMandateBody, ListMandatesQuery, MandateView } from './schema.js';
import { mandateStates, type MandateStatus } from './state.js';

export type MandateRow = typeof mandates.$inferSelect;

const RECOVERY_PREFIX = 'mandate_created:';

/** What a mandate needs besides the database: the payments runtime (connectors, clock) and the sealing keys. */
export interface MandatesDeps {
  rt: PaymentsRuntime;
  encryptor: Encryptor;
}

export function mandateView(row: MandateRow): MandateView {
  return {
    id: toPublicId('mdt', row.id),
    object: 'mandate',
    livemode: row.livemode,
    status: row.status,
    scheme: row.scheme,
    currency: row.currency,
    reference: row.reference,
    max_amount: row.maxAmount,
    customer: { email: row.customerEmail, name: row.customerName ?? '' },
    bank_account: bankAccountView({
      country: row.bankCountry,
      currency: row.bankCurrency,
      last4: row.bankLast4,
      bic: row.bankBic,
      sortCode: row.bankSortCode,
      routingNumber: row.bankRoutingNumber,
      ifsc: row.bankIfsc,
      fingerprint: row.bankFingerprint,
    }),
    connector: row.connector,
    connector_reference: row.connectorReference,
    attempts: (row.attempts as unknown as Attempt[]).map((a) => ({
      connector: a.connector,
      outcome: a.outcome,
      error_code: a.error_code,
      duration_ms: a.duration_ms,
      started_at: a.started_at,
    })),
    failure_code: row.failureCode as MandateFailureCode | null,
    failure_message: row.failureMessage,
    revoked_by: row.revokedBy,
    activated_at: row.activatedAt?.toISOString() ?? null,
    last_debit_at: row.lastDebitAt?.toISOString() ?? null,
    metadata: row.metadata,
    version: row.version,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

// ---- validation -------------------------------------------------------------------------------

/** What each scheme accepts: the account's country, its currency, and how it is written. */
const SCHEME_RULES: Record<MandateScheme, { countries: (c: string) => boolean; countryText: string; currency: string; formats: readonly string[] }> = {
  sepa_core: { countries: (c) => SEPA_COUNTRIES.has(c), countryText: 'a SEPA country', currency: 'EUR', formats: ['iban'] },
  bacs: { countries: (c) => c === 'GB', countryText: 'GB', currency: 'GBP', formats: ['iban', 'gb'] },
  ach: { countries: (c) => c === 'US', countryText: 'US', currency: 'USD', formats: ['us'] },
};

/**
 * The bank account on its own (bank-accounts.ts), then its fit with the scheme, then the
 * mandate's currency with the account's. Every refusal names the field to change.
 */
export function validateMandateInput(input: CreateMandateBody): ValidBankAccount {
  const account = validateBankAccount(input.bank_account, 'bank_account');
  const scheme = input.scheme as MandateScheme;
  const rules = SCHEME_RULES[scheme];
  if (!rules.countries(account.country)) {
    throw new ApiError('parameter_invalid', {
      param: 'bank_account.country',
      message: `A ${scheme} mandate needs an account in ${rules.countryText}; bank_account.country is ${account.country}.`,
    });
  }
  if (account.currency !== rules.currency) {
    throw new ApiError('parameter_invalid', {
      param: 'bank_account.currency',
      message: `A ${scheme} mandate debits ${rules.currency}; bank_account.currency is ${account.currency}.`,
    });
  }
  if (!rules.formats.includes(account.format)) {
    throw new ApiError('parameter_invalid', {
      param: 'bank_account.iban',
      message: `A ${scheme} mandate needs the account as an IBAN (bank_account.iban).`,
    });
  }
  if (input.currency !== account.currency) {
    throw new ApiError('parameter_invalid', {
      param: 'currency',
      message: `currency must equal bank_account.currency (${account.currency}); got ${input.currency}.`,
    });
  }
  return account;
}

/**
 * What the idempotency fingerprint sees of a mandate request: the account number or IBAN as a
 * keyed digest, so that the stored fingerprint is no unkeyed hash of it.
 */
export function redactBankAccountForFingerprint(key: Buffer) {
  return (body: unknown): unknown => {
    const account = (body as { bank_account?: Record<string, unknown> } | undefined)?.bank_account;
    if (!account || typeof account !== 'object') return body;
    const digest = (value: unknown) => crypto.createHmac('sha256', key).update(`idempotency:${String(value)}`).digest('base64url');
    const redacted = { ...account };
    for (const field of ['iban', 'account_number'] as const) if (field in redacted) redacted[field] = digest(redacted[field]);
    return { ...(body as object), bank_account: redacted };
  };
}

// ---- routing ---------------------------------------------------------------------------------

/**
 * The connectors that may hold the mandate, in order: the first routing rule matching the
 * currency and the payment method type `mandate` (amount ranges are for debits, not for the
 * setup), restricted to usable connectors that support mandates.
 */
export function mandateRoute(rt: PaymentsRuntime, rules: readonly RoutingRule[], livemode: boolean, currency: string): string[] {
  const rule = rules.find((r) => ruleMatches({ ...r, amount_min: undefined, amount_max: undefined }, { currency, amount: 1, paymentMethodType: 'mandate' }));
  if (!rule) return [];
  const usable = new Set(usableConnectors(rt, livemode));
  return orderConnectors(rule.connectors, rt.random).filter((name) => {
    const connector = rt.connectors.registry.get(name);
    return usable.has(name) && connector?.paymentMethodTypes.includes('mandate') && connector.setupMandate !== undefined;
  });
}

/** An attempt record in the payments' vocabulary: accepted → succeeded, refused → declined. */
function mandateAttempt(name: string, guarded: Guarded<MandateState | { kind: 'not_found' }>): Attempt {
  if ('skipped' in guarded) return attemptOf(name, guarded);
  const r = guarded.result;
  const mapped =
    r.kind === 'active' || r.kind === 'revoked'
      ? { kind: 'succeeded' }
      : r.kind === 'failed'
        ? { kind: 'declined', failureCode: r.failureCode }
        : r;
  return attemptOf(name, { ...guarded, result: mapped as never });
}

interface SetupExecution {
  attempts: Attempt[];
  connector: string | null;
  result: MandateResult;
}

/** Like routeCharge: a retryable failure moves on to the next connector; anything else stops. */
async function routeSetup(rt: PaymentsRuntime, plan: readonly string[], request: MandateSetupRequest): Promise<SetupExecution> {
  const attempts: Attempt[] = [];
  let last: MandateResult = { kind: 'error', code: 'processor_error', message: 'every connector of the route is unavailable (circuit open)' };
  for (const name of plan) {
    const guarded = await callConnector(rt.call, name, (c, signal) =>
      c.setupMandate ? c.setupMandate(request, signal) : Promise.resolve({ kind: 'error' as const, code: 'request_rejected' as const, message: `${name} takes no mandates` }),
    );
    attempts.push(mandateAttempt(name, guarded));
    if ('skipped' in guarded) continue;
    last = guarded.result;
    if (isRetryable(guarded.result)) continue;
    return { attempts, connector: name, result: guarded.result };
  }
  return { attempts, connector: null, result: last };
}

function setupRequest(row: MandateRow, secret: string): MandateSetupRequest {
  return {
    reference: toPublicId('mdt', row.id),
    scheme: row.scheme,
    currency: row.currency,
    account: {
      country: row.bankCountry,
      currency: row.bankCurrency,
      secret,
      bic: row.bankBic,
      sortCode: row.bankSortCode,
      routingNumber: row.bankRoutingNumber,
    },
    customer: { email: row.customerEmail, name: row.customerName },
  };
}

// ---- outcomes --------------------------------------------------------------------------------

export type MandateUpdate =
  | { kind: 'active'; connector: string; connectorReference: string }
  | { kind: 'pending'; connector: string; connectorReference: string | null }
  | { kind: 'failed'; connector: string | null; connectorReference: string | null; failureCode: MandateFailureCode; failureMessage: string }
  | { kind: 'revoked'; connector: string; connectorReference: string; by: 'bank' | 'merchant' };

export function updateFromMandateState(connector: string, state: MandateState): MandateUpdate {
  switch (state.kind) {
    case 'active':
    case 'pending':
      return { kind: state.kind, connector, connectorReference: state.connectorReference };
    case 'failed':
      return { kind: 'failed', connector, connectorReference: state.connectorReference, failureCode: state.failureCode, failureMessage: state.message };
    case 'revoked':
      return { kind: 'revoked', connector, connectorReference: state.connectorReference, by: state.by };
    default:
      return state satisfies never;
  }
}

function updateFromExecution(execution: SetupExecution): MandateUpdate {
  const { result, connector } = execution;
  if (result.kind !== 'error') return updateFromMandateState(connector!, result);
  const mayHaveActed = connectorThatMayHaveActed(connector, result);
  if (mayHaveActed === null) {
    return {
      kind: 'failed',
      connector,
      connectorReference: null,
      failureCode: 'processing_error',
      failureMessage: `No connector could register the mandate (${result.code}).`,
    };
  }
  // Sent, and no answer: the processor may hold it. The worker asks later.
  return { kind: 'pending', connector: mayHaveActed, connectorReference: null };
}

export const ABANDONED_MANDATE: MandateUpdate = {
  kind: 'failed',
  connector: null,
  connectorReference: null,
  failureCode: 'processing_error',
  failureMessage: 'The request that created the mandate ended before any connector took it; nothing was registered.',
};

function byId(accountId: string, uuid: string): SQL {
  return and(eq(mandates.accountId, accountId), eq(mandates.id, uuid))!;
}

export async function lockMandate(tx: Executor, accountId: string, uuid: string): Promise<MandateRow | undefined> {
  const [row] = await tx.select().from(mandates).where(byId(accountId, uuid)).for('update');
  return row;
}

/**
 * The one place where a mandate's outcome is applied, whoever learnt it (the creating request,
 * the worker, the processor's webhook, a test helper), inside the caller's transaction with the
 * row locked. A report the transition table does not allow from the current status (late,
 * repeated, or about a mandate revoked meanwhile) changes nothing but the recorded attempts.
 */
export async function applyMandateUpdate(
  tx: Executor,
  ctx: RequestContext,
  row: MandateRow,
  update: MandateUpdate,
  attempts: Attempt[],
  rt: PaymentsRuntime,
): Promise<MandateRow> {
  const now = rt.now();
  const where = byId(row.accountId, row.id);
  const withAttempts = attempts.length ? [...row.attempts, ...(attempts as unknown as Record<string, unknown>[])] : row.attempts;
  const save = async (changes: Partial<MandateRow>) => {
    const [updated] = await tx
      .update(mandates)
      .set({ ...changes, attempts: withAttempts, version: row.version + 1, updatedAt: now })
      .where(where)
      .returning();
    return updated!;
  };

  if (update.kind === 'pending') {
    const firstAcceptance = row.status === 'pending' && row.connector === null;
    const referenceKnown = update.connectorReference === null || update.connectorReference === row.connectorReference;
    if (row.status !== 'pending' || (!firstAcceptance && referenceKnown)) return attempts.length ? save({}) : row;
    const updated = await save({
      connector: update.connector,
      connectorReference: update.connectorReference ?? row.connectorReference,
      nextStatusCheckAt: new Date(now.getTime() + rt.config.statusCheckIntervalMs),
    });
    if (firstAcceptance) await recordEvent(tx, ctx, 'mandate.pending', mandateView(updated), now);
    return updated;
  }

  if (!mandateStates.can(row.status, update.kind)) return attempts.length ? save({}) : row;
  if (update.kind === 'revoked' && row.connector !== null && row.connector !== update.connector) return row;
  const changes: Partial<MandateRow> = {
    status: update.kind,
    connector: update.connector ?? row.connector,
    connectorReference: update.connectorReference ?? row.connectorReference,
    nextStatusCheckAt: null,
  };
  if (update.kind === 'active') Object.assign(changes, { activatedAt: now, lastActivityAt: now });
  if (update.kind === 'failed') Object.assign(changes, { failureCode: update.failureCode, failureMessage: update.failureMessage });
  if (update.kind === 'revoked') changes.revokedBy = update.by;
  const updated = await save(changes);
  await recordEvent(tx, ctx, `mandate.${update.kind}`, mandateView(updated), now);
  return updated;
}

/** Applies a connector's report to a mandate in its own transaction (or the caller's). */
export async function applyMandateState(
  db: Db,
  rt: PaymentsRuntime,
  ctx: RequestContext,
  accountId: string,
  uuid: string,
  connector: string,
  state: MandateState,
  tx?: Executor,
): Promise<MandateRow | undefined> {
  const run = async (t: Executor) => {
    const row = await lockMandate(t, accountId, uuid);
    if (!row) return undefined;
    if (row.connector !== null && row.connector !== connector) return row; // another connector's mandate
    return applyMandateUpdate(t, ctx, row, updateFromMandateState(connector, state), [], rt);
  };
  return tx ? run(tx) : db.transaction(run);
}

// ---- create ------------------------------------------------------------------------------------

export async function createMandate(db: Db, deps: MandatesDeps, ctx: RequestContext, input: CreateMandateBody): Promise<Outcome> {
  const { rt, encryptor } = deps;
  const account = validateMandateInput(input);
  const recovery = ctx.idempotency?.recoveryPoint ?? 'started';
  if (recovery.startsWith(RECOVERY_PREFIX)) return resumeMandate(db, deps, ctx, recovery.slice(RECOVERY_PREFIX.length));

  const route = mandateRoute(rt, await routingRules(db, rt, ctx), ctx.livemode, input.currency);
  if (route.length === 0) {
    throw new ApiError('routing_no_match', {
      message: `No connector of this account and mode takes ${input.currency} mandates (routing rules with payment method type mandate); see GET /v1/routing.`,
    });
  }
  if (!route.some((name) => rt.connectors.breaker.isAvailable(name))) {
    throw new ApiError('processor_unavailable', { message: `Every connector of the route (${route.join(', ')}) is failing; nothing was created. Retry later.` });
  }
  const now = rt.now();
  const { uuid } = newId('mdt');
  const created = await db.transaction(async (tx) => {
    const [row] = await tx
      .insert(mandates)
      .values({
        accountId: ctx.accountId,
        id: uuid,
        livemode: ctx.livemode,
        status: 'pending',
        scheme: input.scheme as MandateScheme,
        currency: input.currency,
        reference: input.reference,
        maxAmount: input.max_amount ?? null,
        customerEmail: input.customer.email,
        customerName: input.customer.name,
        bankCountry: account.country,
        bankCurrency: account.currency,
        bankLast4: account.last4,
        bankBic: account.bic,
        bankSortCode: account.sortCode,
        bankRoutingNumber: account.routingNumber,
        bankIfsc: account.ifsc,
        // Per merchant account, derived as for beneficiaries: the same account fingerprints alike
        // across a merchant's mandates and beneficiaries, and cannot be correlated across merchants.
        bankFingerprint: bankAccountFingerprint(account, accountFingerprintKey(rt.config.cardFingerprintKey, ctx.accountId)),
        bankSecretEncrypted: sealBankAccountSecret(encryptor, account, uuid),
        route,
        metadata: input.metadata ?? {},
        // Only a mandate abandoned by a crashed request is still without a connector by then.
        nextStatusCheckAt: new Date(now.getTime() + abandonAfterMs(rt, route.length)),
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    await recordEvent(tx, ctx, 'mandate.created', mandateView(row!), now);
    await setRecoveryPoint(tx, ctx, `${RECOVERY_PREFIX}${uuid}`);
    return row!;
  });
  rt.crashPoint('mandate_created');
  const execution = await routeSetup(rt, created.route, setupRequest(created, account.secret));
  return finish(db, rt, ctx, uuid, updateFromExecution(execution), execution.attempts);
}

async function finish(db: Db, rt: PaymentsRuntime, ctx: RequestContext, uuid: string, update: MandateUpdate | undefined, attempts: Attempt[]) {
  return db.transaction(async (tx) => {
    const row = await lockMandate(tx, ctx.accountId, uuid);
    if (!row) throw new Error(`mandate ${uuid} vanished between phases`);
    const after = update ? await applyMandateUpdate(tx, ctx, row, update, attempts, rt) : row;
    return respond(tx, ctx, 201, mandateView(after));
  });
}

export type LocatedMandate = { found: true; connector: string; state: MandateState; attempt: Attempt } | { found: false; certain: boolean };

/** Asks every connector of the route whether it holds the mandate; `certain: false` when one could not answer. */
export async function locateMandate(rt: PaymentsRuntime, row: MandateRow): Promise<LocatedMandate> {
  let certain = true;
  const reference = toPublicId('mdt', row.id);
  for (const name of row.route) {
    const guarded = await callConnector(rt.call, name, (c, signal) =>
      c.mandateStatus ? c.mandateStatus({ reference, connectorReference: null }, signal) : Promise.resolve({ kind: 'not_found' as const }),
    );
    if ('skipped' in guarded || guarded.result.kind === 'error') {
      certain = false;
      continue;
    }
    if (guarded.result.kind !== 'not_found') return { found: true, connector: name, state: guarded.result, attempt: mandateAttempt(name, guarded) };
  }
  return { found: false, certain };
}

async function resumeMandate(db: Db, deps: MandatesDeps, ctx: RequestContext, uuid: string): Promise<Outcome> {
  const { rt } = deps;
  const [row] = await db.select().from(mandates).where(and(byId(ctx.accountId, uuid), eq(mandates.livemode, ctx.livemode)));
  if (!row) throw new Error(`recovery point names mandate ${uuid}, which does not exist`);
  if (row.status !== 'pending' || row.connector !== null) return finish(db, rt, ctx, uuid, undefined, []);
  const located = await locateMandate(rt, row);
  if (located.found) return finish(db, rt, ctx, uuid, updateFromMandateState(located.connector, located.state), [located.attempt]);
  if (!located.certain) {
    throw new ApiError('service_unavailable', {
      message: 'A connector of this mandate cannot tell whether it already holds it; retry later with the same Idempotency-Key.',
      headers: { 'retry-after': '5' },
    });
  }
  // Past this, the worker may be declaring the mandate abandoned right now.
  if (rt.now().getTime() - row.createdAt.getTime() >= rt.idempotencyLockTimeoutS * 1000 + rt.config.statusCheckIntervalMs) {
    return finish(db, rt, ctx, uuid, ABANDONED_MANDATE, []);
  }
  const secret = openBankAccountSecret(deps.encryptor, row.bankSecretEncrypted, row.id);
  const execution = await routeSetup(rt, row.route, setupRequest(row, secret));
  return finish(db, rt, ctx, uuid, updateFromExecution(execution), execution.attempts);
}

// ---- read ------------------------------------------------------------------------------------

export async function loadMandate(db: Db, ctx: RequestContext, id: string, param = 'id'): Promise<MandateRow> {
  const uuid = parseId('mdt', id);
  if (uuid) {
    const [row] = await db.select().from(mandates).where(and(byId(ctx.accountId, uuid), eq(mandates.livemode, ctx.livemode)));
    if (row) return row;
  }
  const missing = await notFound(db, ctx, mandates, uuid, 'mandate', id);
  throw param === 'id' ? missing : new ApiError('resource_missing', { param, message: missing.message });
}

export async function retrieveMandate(db: Db, ctx: RequestContext, id: string): Promise<MandateView> {
  return mandateView(await loadMandate(db, ctx, id));
}

export async function listMandates(db: Db, ctx: RequestContext, params: ListMandatesQuery): Promise<Page<MandateView>> {
  const plan = planPage('mdt', mandates.id, mandates.createdAt, params);
  const rows = await db
    .select()
    .from(mandates)
    .where(
      and(
        eq(mandates.accountId, ctx.accountId),
        eq(mandates.livemode, ctx.livemode),
        params.status ? eq(mandates.status, params.status as MandateStatus) : undefined,
        params.customer_email ? eq(mandates.customerEmail, params.customer_email) : undefined,
        plan.where,
      ),
    )
    .orderBy(plan.orderBy)
    .limit(plan.fetch);
  return toPage(rows, plan, mandateView);
}

// ---- revoke ------------------------------------------------------------------------------------

/**
 * The merchant revokes an active mandate: at once on our side (new debits are refused from the
 * commit on; debits already sent still settle, once), then the connector is told, best effort —
 * should that call fail, the processor refuses nothing we would send anyway.
 */
export async function revokeMandate(db: Db, rt: PaymentsRuntime, ctx: RequestContext, id: string): Promise<Outcome> {
  const found = await loadMandate(db, ctx, id);
  const { outcome, row } = await db.transaction(async (tx) => {
    const locked = (await lockMandate(tx, ctx.accountId, found.id))!;
    mandateStates.assert(locked.status, 'revoked', 'revoke');
    const update: MandateUpdate = { kind: 'revoked', connector: locked.connector!, connectorReference: locked.connectorReference ?? '', by: 'merchant' };
    const after = await applyMandateUpdate(tx, ctx, locked, update, [], rt);
    return { outcome: await respond(tx, ctx, 200, mandateView(after)), row: after };
  });
  if (row.connector) {
    const reference = toPublicId('mdt', row.id);
    await callConnector(rt.call, row.connector, (c, signal) =>
      c.cancelMandate ? c.cancelMandate({ reference, connectorReference: row.connectorReference }, signal) : Promise.resolve({ kind: 'not_found' as const }),
    );
  }
  return outcome;
}

// ---- test helper ---------------------------------------------------------------------------

/**
 * Test helper: the simulated bank answers a pending mandate (`active`, `failed`) or the customer
 * revokes an active one through their bank (`revoked`); the processor reports it by webhook too,
 * which then finds the work done. A mandate the processor had already settled (the timeout
 * account) keeps its true outcome whatever was asked.
 */
export async function resolveTestMandate(db: Db, rt: PaymentsRuntime, ctx: RequestContext, id: string, outcome: 'active' | 'failed' | 'revoked'): Promise<Outcome> {
  if (ctx.livemode) throw testHelpersOnly();
  const row = await loadMandate(db, ctx, id);
  mandateStates.assert(row.status, outcome, outcome === 'revoked' ? 'revoke (as the bank)' : 'resolve');
  if (row.connector === null) throw invalidState('mandate', 'pending (no connector has taken it yet)', ['pending at a connector'], 'resolve');
  const connector = row.connector;
  const reference = toPublicId('mdt', row.id);
  const state = await settleThroughTestControl(rt, connector, 'mandate', (c, signal) => c.resolveTestMandate(reference, outcome, signal));
  return db.transaction(async (tx) => {
    const after = await applyMandateState(db, rt, ctx, row.accountId, row.id, connector, state, tx);
    return respond(tx, ctx, 200, mandateView(after ?? row));
  });
}
