// Beneficiaries: who receives payouts. The bank account is validated by src/domain/bank-accounts/rules.ts;
// its secret part (IBAN or account number) is sealed with the configured encryption key, bound to
// the beneficiary's id, and opened only in memory when a payout is sent. Answers, events and logs
// carry last4, the non-secret routing fields and a keyed fingerprint.
//
// Fingerprints are keyed per merchant account (as card fingerprints are): two beneficiaries of
// one merchant with the same bank account share a fingerprint, while a fingerprint tells nothing
// about another merchant's beneficiaries. Duplicates are allowed (as Stripe allows them); the
// fingerprint and the `fingerprint` list filter let the merchant find them.
import crypto from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import type { Db, Executor } from '../../storage/db.js';
import { beneficiaries } from '../../storage/schema.js';
import { newId, toPublicId } from '../../kernel/ids.js';
import { bankAccountFingerprint, openBankAccountSecret, sealBankAccountSecret, validateBankAccount } from '../bank-accounts/rules.js';
import { bankAccountColumns, bankAccountViewOfRow } from '../bank-accounts/columns.js';
import { respond } from '../../idempotency/store.js';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import { recordEvent } from '../../events/service.js';
import type { EventType } from '../../events/types.js';
import { changeOne, type Resource, tenantReads } from '../../storage/tenant.js';
import type { Runtime } from '../../runtime.js';
import type { BeneficiaryView, CreateBeneficiaryBody, ListBeneficiariesQuery, UpdateBeneficiaryBody } from './schema.js';
import { beneficiaryStates, type BeneficiaryStatus } from './state.js';

export type BeneficiaryRow = typeof beneficiaries.$inferSelect;

const BENEFICIARIES: Resource<typeof beneficiaries> = { table: beneficiaries, prefix: 'ben', name: 'beneficiary' };

/** The fingerprint key of one merchant account, derived from the configured one. */
export function accountFingerprintKey(key: Buffer, accountId: string): Buffer {
  return crypto.createHmac('sha256', key).update(`bank_account_fingerprint:${accountId}`).digest();
}

export function beneficiaryView(row: BeneficiaryRow): BeneficiaryView {
  return {
    id: toPublicId('ben', row.id),
    object: 'beneficiary',
    livemode: row.livemode,
    status: row.status,
    type: row.type,
    name: row.name,
    email: row.email,
    bank_account: bankAccountViewOfRow(row),
    metadata: row.metadata,
    version: row.version,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

const sealContext = (uuid: string) => toPublicId('ben', uuid);

/** The IBAN or account number, in memory for a connector call only. */
export function openBeneficiarySecret(rt: Runtime, row: BeneficiaryRow): string {
  return openBankAccountSecret(rt.encryptor, row.bankSecretEncrypted, sealContext(row.id));
}

export async function createBeneficiary(db: Db, rt: Runtime, ctx: RequestContext, input: CreateBeneficiaryBody): Promise<Outcome> {
  const account = validateBankAccount(input.bank_account);
  const now = rt.now();
  const { uuid } = newId('ben');
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(beneficiaries)
      .values({
        accountId: ctx.accountId,
        id: uuid,
        livemode: ctx.livemode,
        status: 'active',
        type: input.type as BeneficiaryRow['type'],
        name: input.name,
        email: input.email ?? null,
        ...bankAccountColumns(
          account,
          bankAccountFingerprint(account, accountFingerprintKey(rt.fingerprintKey, ctx.accountId)),
          sealBankAccountSecret(rt.encryptor, account, sealContext(uuid)),
        ),
        metadata: input.metadata ?? {},
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    const view = beneficiaryView(row!);
    await recordEvent(tx, ctx, 'beneficiary.created', view, now);
    return respond(tx, ctx, 201, view);
  });
}

export const { retrieve: retrieveBeneficiary, list: listBeneficiaries } = tenantReads(BENEFICIARIES, beneficiaryView, (q: ListBeneficiariesQuery) => [
  q.status ? eq(beneficiaries.status, q.status as BeneficiaryStatus) : undefined,
  q.fingerprint ? eq(beneficiaries.bankFingerprint, q.fingerprint) : undefined,
]);

/** Every change of a beneficiary goes through here, so none forgets to move the version or announce itself. */
async function saveBeneficiary(tx: Executor, ctx: RequestContext, row: BeneficiaryRow, changes: Partial<BeneficiaryRow>, eventType: EventType, now: Date): Promise<Outcome> {
  if (Object.keys(changes).length === 0) return respond(tx, ctx, 200, beneficiaryView(row));
  const [updated] = await tx
    .update(beneficiaries)
    .set({ ...changes, version: sql`${beneficiaries.version} + 1`, updatedAt: now })
    .where(and(eq(beneficiaries.accountId, row.accountId), eq(beneficiaries.id, row.id)))
    .returning();
  const view = beneficiaryView(updated!);
  await recordEvent(tx, ctx, eventType, view, now);
  return respond(tx, ctx, 200, view);
}

export async function updateBeneficiary(db: Db, rt: Runtime, ctx: RequestContext, id: string, input: UpdateBeneficiaryBody): Promise<Outcome> {
  const now = rt.now();
  return changeOne(db, ctx, BENEFICIARIES, id, async (tx, row) => {
    const changes: Partial<BeneficiaryRow> = {};
    if (input.name !== undefined && input.name !== row.name) changes.name = input.name;
    if (input.email !== undefined && input.email !== row.email) changes.email = input.email;
    if (input.metadata !== undefined) changes.metadata = input.metadata;
    return saveBeneficiary(tx, ctx, row, changes, 'beneficiary.updated', now);
  });
}

/** DELETE: the beneficiary is disabled, not removed (its payouts keep pointing at it). Repeating it changes nothing. */
export async function disableBeneficiary(db: Db, rt: Runtime, ctx: RequestContext, id: string): Promise<Outcome> {
  const now = rt.now();
  return changeOne(db, ctx, BENEFICIARIES, id, async (tx, row) => {
    if (!beneficiaryStates.can(row.status, 'disabled')) return respond(tx, ctx, 200, beneficiaryView(row));
    beneficiaryStates.assert(row.status, 'disabled', 'disable');
    return saveBeneficiary(tx, ctx, row, { status: 'disabled' }, 'beneficiary.disabled', now);
  });
}
