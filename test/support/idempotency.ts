// The idempotency tests' view of one service and its tenant: the rows a request left (orders by
// reference, events, the key's record) and order creation under a chosen key.
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import { parseId } from '../../src/kernel/ids.js';
import type { ServiceFixture } from './fixtures.js';
import { call, type Row } from './helpers.js';

export const SETTINGS = { retentionS: 24 * 3600, lockTimeoutS: 60 };
export const newKey = () => `idem-${crypto.randomUUID()}`;

export function idempotencyKit(h: ServiceFixture) {
  /** The tenant's account, as stored. */
  const accountUuid = () => parseId('acct', h.tenant.accountId)!;
  return {
    accountUuid,
    ordersWithReference: (reference: string) => h.query(sql`SELECT id, livemode, account_id FROM payment_orders WHERE reference = ${reference}`),
    async eventCount(type: string, objectId: string): Promise<number> {
      const [row] = await h.query(sql`SELECT count(*)::int AS n FROM events WHERE type = ${type} AND object_id = ${objectId}`);
      return Number(row!.n);
    },
    async keyRow(key: string, livemode = false, account = accountUuid()): Promise<Row | undefined> {
      const [row] = await h.query(
        sql`SELECT *, extract(epoch FROM expires_at - created_at)::int AS retention_s
            FROM idempotency_keys WHERE account_id = ${account} AND livemode = ${livemode} AND key = ${key}`,
      );
      return row;
    },
    /** POST /v1/payment-orders with `body` under `key`, as the tenant (or with `secret`). */
    create: (body: unknown, key: string, secret = h.tenant.testKey) => call(h.url, 'POST', '/v1/payment-orders', { key: secret, body, idempotencyKey: key }),
  };
}
