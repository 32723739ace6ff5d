// The columns every movement's table and row have, which the engine reads by name.
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';

/** The columns the core reads of a movement's table by name. */
export interface MovementTable extends PgTable {
  accountId: PgColumn;
  id: PgColumn;
  livemode: PgColumn;
  status: PgColumn;
  connector: PgColumn;
}

/** The columns every movement row has. */
export interface MovementRow {
  accountId: string;
  id: string;
  livemode: boolean;
  status: string;
  connector: string | null;
  connectorReference: string | null;
  createdAt: Date;
}
