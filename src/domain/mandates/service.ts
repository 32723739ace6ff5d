// Mandates: a customer's authorisation to debit their bank account, registered with the customer's
// bank through a connector by the movement engine (src/movement/engine.ts), like payments. This
// file gives the mandate's admit rule (no parent: the mandate inserted pending, its account number
// sealed, only last4 and the keyed fingerprint in clear, its route fixed), what is sent (the account
// number from the request, in memory only) and what a resumed retry sends again (the number opened
// from its sealed column). docs/payouts-and-mandates.md tells the whole story.
import { eq } from 'drizzle-orm';
import type { Db, Executor } from '../../storage/db.js';
import { mandates } from '../../storage/schema.js';
import { newId, toPublicId } from '../../kernel/ids.js';
import { ApiError, invalidState } from '../../kernel/errors.js';
import {
  bankAccountFingerprint,
  openBankAccountSecret,
  SEPA_COUNTRIES,
  sealBankAccountSecret,
  validateBankAccount,
  type ValidBankAccount,
} from '../bank-accounts/rules.js';
import { respond } from '../../idempotency/store.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import type { Page } from '../../kernel/pagination.js';
import { changeOne, listPage, loadOne, type Resource } from '../../storage/tenant.js';
import { routingFor } from '../routing/targets.js';
import { planMovementRoute } from '../routing/planner.js';
import { callConnector } from '../../connectors/router.js';
import type { MandateScheme, MandateSetupRequest } from '../../connectors/types.js';
import { testHelpersOnly } from '../../ledger/balance.js';
import type { Runtime } from '../../runtime.js';
import { abandonAfterMs } from '../../movement/saga.js';
import type { NewMovement } from '../../movement/engine.js';
import { applyState } from '../../movement/apply.js';
import { resolveThroughTestControl } from '../test-controls.js';
import { accountFingerprintKey } from '../beneficiaries/service.js';
import { bankAccountColumns } from '../bank-accounts/columns.js';
import type { CreateMandateBody, ListMandatesQuery, MandateView } from './schema.js';
import { mandateStates, type MandateStatus } from './state.js';
import { applyReport } from '../../movement/report.js';
import { MANDATE_RULES, mandateView, type MandateRow, type MandateUpdate } from './transitions.js';
import { mandateKind } from './kind.js';

// ---- validation -------------------------------------------------------------------------------

/** What each scheme accepts: the account's country, its currency, and how it is written. */
const SCHEME_RULES: Record<MandateScheme, { countries: (c: string) => boolean; countryText: string; currency: string; formats: readonly string[] }> = {
  sepa_core: { countries: (c) => SEPA_COUNTRIES.has(c), countryText: 'a SEPA country', currency: 'EUR', formats: ['iban'] },
  bacs: { countries: (c) => c === 'GB', countryText: 'GB', currency: 'GBP', formats: ['iban', 'gb'] },
  ach: { countries: (c) => c === 'US', countryText: 'US', currency: 'USD', formats: ['us'] },
};

/**
 * The bank account on its own (src/domain/bank-accounts/rules.ts), then its fit with the scheme, then the
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

// ---- what the processor is sent ----------------------------------------------------------------

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


// ---- create ------------------------------------------------------------------------------------

/** POST /v1/mandates as the engine runs it (runMovement): the input checked at once, then the mandate's admit rule and what it sends. */
export function newMandate(db: Db, rt: Runtime, ctx: RequestContext, input: CreateMandateBody): NewMovement<MandateRow, MandateSetupRequest> {
  const account = validateMandateInput(input);
  return {
    kind: mandateKind,
    // The account number is read back from its sealed column, never from logs or the idempotency record.
    resend: async (row) => setupRequest(row, openBankAccountSecret(rt.encryptor, row.bankSecretEncrypted, row.id)),
    plan: async () => {
      // A set-up moves no amount: the rules' amount ranges are for the debits.
      const route = planMovementRoute(rt, await routingFor(db, rt, ctx), { need: 'mandate', currency: input.currency });
      if (route.length === 0) {
        throw new ApiError('routing_no_match', {
          message: `No connector of this account and mode takes ${input.currency} mandates (routing rules with payment method type mandate); see GET /v1/routing.`,
        });
      }
      if (!route.some((name) => rt.connectors.breaker.isAvailable(name))) {
        throw new ApiError('processor_unavailable', { message: `Every connector of the route (${route.join(', ')}) is failing; nothing was created. Retry later.` });
      }
      return {
        admit: (tx, now) => insertMandate(tx, rt, ctx, input, account, route, now),
        // A mandate has no parent: phase 1 always inserts it.
        request: (row) => setupRequest(row, account.secret),
      };
    },
  };
}

/** The admit rule of a mandate: no parent to lock, the mandate inserted pending with its account number sealed. */
async function insertMandate(
  tx: Executor,
  rt: Runtime,
  ctx: RequestContext,
  input: CreateMandateBody,
  account: ValidBankAccount,
  route: string[],
  now: Date,
): Promise<MandateRow> {
  const { uuid } = newId('mdt');
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
      // The fingerprint is per merchant account, derived as for beneficiaries: the same account
      // fingerprints alike across a merchant's mandates and beneficiaries, and cannot be
      // correlated across merchants.
      ...bankAccountColumns(
        account,
        bankAccountFingerprint(account, accountFingerprintKey(rt.fingerprintKey, ctx.accountId)),
        sealBankAccountSecret(rt.encryptor, account, uuid),
      ),
      route,
      metadata: input.metadata ?? {},
      // Only a mandate abandoned by a crashed request is still without a connector by then.
      nextStatusCheckAt: new Date(now.getTime() + abandonAfterMs(rt, route.length)),
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  return row!;
}

// ---- read ------------------------------------------------------------------------------------

const MANDATES: Resource<typeof mandates> = { table: mandates, prefix: 'mdt', name: 'mandate' };

export function loadMandate(db: Db, ctx: RequestContext, id: string, param = 'id'): Promise<MandateRow> {
  return loadOne(db, ctx, MANDATES, id, param);
}

export async function retrieveMandate(db: Db, ctx: RequestContext, id: string): Promise<MandateView> {
  return mandateView(await loadMandate(db, ctx, id));
}

export async function listMandates(db: Db, ctx: RequestContext, params: ListMandatesQuery): Promise<Page<MandateView>> {
  const filters = [
    params.status ? eq(mandates.status, params.status as MandateStatus) : undefined,
    params.customer_email ? eq(mandates.customerEmail, params.customer_email) : undefined,
  ];
  return listPage(db, ctx, MANDATES, params, filters, mandateView);
}

// ---- revoke ------------------------------------------------------------------------------------

/**
 * The merchant revokes an active mandate: at once on our side (new debits are refused from the
 * commit on; debits already sent still settle, once), then the connector is told, best effort —
 * should that call fail, the processor refuses nothing we would send anyway.
 */
export async function revokeMandate(db: Db, rt: Runtime, ctx: RequestContext, id: string): Promise<Outcome> {
  const { outcome, row } = await changeOne(db, ctx, MANDATES, id, async (tx, locked) => {
    mandateStates.assert(locked.status, 'revoked', 'revoke');
    const update: MandateUpdate = { kind: 'revoked', connector: locked.connector!, connectorReference: locked.connectorReference ?? '', by: 'merchant' };
    const after = await applyReport(tx, ctx, MANDATE_RULES, locked, update, [], rt);
    return { outcome: await respond(tx, ctx, 200, mandateView(after)), row: after };
  });
  rt.metrics.movement('mandate', 'revoked', row.connector);
  if (row.connector) {
    const reference = toPublicId('mdt', row.id);
    await callConnector(
      rt.callsFor(ctx),
      row.connector,
      (c, signal) =>
        c.cancelMandate ? c.cancelMandate({ reference, connectorReference: row.connectorReference }, signal) : Promise.resolve({ kind: 'not_found' as const }),
      'mandate.revoke',
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
export async function resolveTestMandate(db: Db, rt: Runtime, ctx: RequestContext, id: string, outcome: 'active' | 'failed' | 'revoked'): Promise<Outcome> {
  if (ctx.livemode) throw testHelpersOnly();
  const row = await loadMandate(db, ctx, id);
  mandateStates.assert(row.status, outcome, outcome === 'revoked' ? 'revoke (as the bank)' : 'resolve');
  if (row.connector === null) throw invalidState('mandate', 'pending (no connector has taken it yet)', ['pending at a connector'], 'resolve');
  const connector = row.connector;
  const reference = toPublicId('mdt', row.id);
  const state = await resolveThroughTestControl(rt, ctx, connector, 'mandate', (c, signal) => c.resolveTestMandate(reference, outcome, signal));
  return db.transaction(async (tx) => {
    const after = await applyState<MandateRow>(db, rt, mandateKind, ctx, row.id, connector, state, { tx });
    return respond(tx, ctx, 200, mandateView(after ?? row));
  });
}

