// The one way a lookup by id fails. Another account's object and a malformed id look exactly like
// an absent one; this account's object in the other mode is named as such, to spare the
// integrator a puzzle (as Stripe does), since it reveals nothing they do not own.
import { and, eq } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Db } from './db.js';
import { ApiError } from '../kernel/errors.js';
import type { RequestContext } from '../kernel/context.js';

interface TenantTable extends PgTable {
  accountId: PgColumn;
  livemode: PgColumn;
  id: PgColumn;
}

export async function notFound(
  db: Db,
  ctx: RequestContext,
  table: TenantTable,
  uuid: string | undefined,
  objectName: string,
  publicId: string,
): Promise<ApiError> {
  const message = `No such ${objectName}: '${publicId}'.`;
  if (uuid) {
    const [other] = await db
      .select({ id: table.id })
      .from(table as PgTable)
      .where(and(eq(table.accountId, ctx.accountId), eq(table.livemode, !ctx.livemode), eq(table.id, uuid)));
    if (other) {
      const [has, used] = ctx.livemode ? ['test', 'live'] : ['live', 'test'];
      return new ApiError('resource_missing', {
        param: 'id',
        message: `${message} It exists in ${has} mode, but a ${used} mode key was used.`,
      });
    }
  }
  return new ApiError('resource_missing', { param: 'id', message });
}
