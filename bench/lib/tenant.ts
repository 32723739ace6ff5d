// The one tenant a benchmark's load runs as: the bench database migrated, an account and a test-mode
// API key, made through the service's own code.
import { createAccount, issueKey } from '../../src/domain/accounts/service.js';
import { openPostgres, runMigrations } from '../../src/storage/db.js';
import { parseId } from '../../src/kernel/ids.js';
import type { BenchDatabase } from './database.js';

export interface Tenant {
  /** The account's UUID, as the tables and pgbench scripts hold it. */
  accountUuid: string;
  /** Its test-mode API key. */
  secret: string;
}

export async function setUpTenant(db: BenchDatabase, name = 'Benchmark account'): Promise<Tenant> {
  const database = await openPostgres(db.url, { poolSize: 2 });
  try {
    await runMigrations(database);
    const account = await createAccount(database.db, name);
    const key = await issueKey(database.db, account.id, { livemode: false, name: 'bench' });
    return { accountUuid: parseId('acct', account.id)!, secret: key.secret };
  } finally {
    await database.close();
  }
}
