// Transaction-level advisory locks on a tenant's key: the one way a check-then-write of one account
// and mode (a count below a limit, then an insert) is made to run one at a time, where no row exists
// yet to lock. The lock goes with the transaction, so a crash never leaves one behind.
import { sql } from 'drizzle-orm';
import type { Executor } from './db.js';

/** Whose key: the account and mode every lock is scoped by. */
export interface LockTenancy {
  accountId: string;
  livemode: boolean;
}

/** The key of `scope`'s lock in the tenant's account and mode, `parts` narrowing it (e.g. to one card). */
export function tenantLockKey(scope: string, ctx: LockTenancy, ...parts: string[]): string {
  return [scope, ctx.accountId, String(ctx.livemode), ...parts].join(':');
}

/**
 * Waits for, then holds until the transaction ends, the lock of `scope` in the tenant's account and
 * mode (`parts` narrow it, e.g. to one card). The statement text is fixed: a session outside the
 * service holds the same lock by it on tenantLockKey's key (test/lifecycle/payments.reattempts.test.ts).
 */
export async function lockTenantKey(tx: Executor, scope: string, ctx: LockTenancy, ...parts: string[]): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${tenantLockKey(scope, ctx, ...parts)}, 0))`);
}
