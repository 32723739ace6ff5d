// What a settled direct debit changes on its mandate: the last-debit time, from which dormancy
// (expiry) counts. Called inside the transaction that applies the payment's success (transitions.ts).
import { mandateStates } from './state.js';
import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../../storage/db.js';
import type { MandateRow } from './transitions.js';
import { mandates } from '../../storage/schema.js';
import { parseId, toPublicId } from '../../kernel/ids.js';
import { ApiError } from '../../kernel/errors.js';

export interface MandatePaymentMethod {
  type: 'mandate';
  mandate: string;
  scheme: string;
  last4: string;
}

export function isMandateMethod(method: Record<string, unknown>): method is Record<string, unknown> & MandatePaymentMethod {
  return method.type === 'mandate' && typeof method.mandate === 'string';
}

export async function recordMandateDebit(tx: Executor, accountId: string, method: MandatePaymentMethod, at: Date): Promise<void> {
  const uuid = parseId('mdt', method.mandate);
  if (!uuid) return;
  // Whatever the mandate's status now (a revoked mandate's last debit still settles), the fact is kept.
  await tx
    .update(mandates)
    .set({ lastDebitAt: at, lastActivityAt: at, version: sql`${mandates.version} + 1`, updatedAt: at })
    .where(and(eq(mandates.accountId, accountId), eq(mandates.id, uuid)));
}


/**
 * Inside the transaction that creates a direct-debit payment: locks the mandate (shared, so that
 * debits do not queue on each other while a revocation waits for them) and checks that it may
 * debit this order. Every refusal is an eligibility error naming payment_method.mandate.
 */
export async function lockMandateForDebit(tx: Executor, mandate: MandateRow, order: { currency: string; amount: number }): Promise<MandateRow> {
  const [row] = await tx
    .select()
    .from(mandates)
    .where(and(eq(mandates.accountId, mandate.accountId), eq(mandates.id, mandate.id)))
    .for('share');
  if (!mandateStates.is(row!.status, 'debitable') || row!.connector === null || row!.connectorReference === null) {
    throw new ApiError('mandate_not_active', {
      param: 'payment_method.mandate',
      message: `The mandate is ${row!.status}; only an active mandate can be debited.`,
    });
  }
  if (row!.currency !== order.currency) {
    throw new ApiError('currency_mismatch', {
      param: 'payment_method.mandate',
      message: `The mandate debits ${row!.currency}; the payment order is in ${order.currency}.`,
    });
  }
  if (row!.maxAmount !== null && order.amount > row!.maxAmount) {
    throw new ApiError('amount_above_limit', {
      param: 'payment_method.mandate',
      message: `The order's amount ${order.amount} is above the mandate's max_amount ${row!.maxAmount}.`,
    });
  }
  return row!;
}

export function mandatePaymentMethod(row: MandateRow): MandatePaymentMethod {
  return { type: 'mandate', mandate: toPublicId('mdt', row.id), scheme: row.scheme, last4: row.bankLast4 };
}
