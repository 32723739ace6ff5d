// The isolation suite's rows for processors: the connector catalogue, connector accounts and the
// reconciliation runs of their records (split from isolation.routes.ts, which holds the rest).
import { reconciliationRuns } from '../../src/storage/schema.js';
import { newId, parseId } from '../../src/kernel/ids.js';
import type { Db } from '../../src/storage/db.js';
import { isLive, type Principal, type World } from './isolation.routes.js';
import type { Route } from './isolation.route-table.js';

const ownAccount = (w: World, me: Principal) => w.owned[me].connector_account[0]!;

/**
 * A run of `me`'s first connector account: through the API in test mode (a simulator's report);
 * in live mode, whose lab processor has no records to give, the row as a run writes it.
 */
export async function makeReconciliationRun(w: World, db: Db, me: Principal): Promise<string> {
  if (!isLive(me)) {
    const res = await w.as(me, 'POST', '/v1/reconciliation-runs', { connector_account: ownAccount(w, me) });
    if (res.status !== 201) throw new Error(`${me} reconciliation run: ${res.text}`);
    w.owned[me].reconciliation_run.push(res.body.id);
    return res.body.id;
  }
  const { id, uuid } = newId('rec');
  const at = new Date();
  await db.insert(reconciliationRuns).values({
    accountId: parseId('acct', w.accountIds[me])!, id: uuid, livemode: true, connectorAccountId: parseId('ca', ownAccount(w, me))!, connector: 'gocardless',
    source: 'simulator_report', periodStart: new Date(+at - 86_400_000), periodEnd: at, status: 'completed', records: 0, matched: 0, exceptions: [], feesBooked: {}, createdAt: at, updatedAt: at,
  });
  w.owned[me].reconciliation_run.push(id);
  return id;
}

export const CONNECTOR_ROUTES: Route[] = [
  { route: 'GET /v1/connectors', kind: 'account', ok: 200 },
  { route: 'POST /v1/connector-accounts', kind: 'create', resource: 'connector_account', ok: 201, body: (w, me) => w.connectorAccountBody(me) },
  { route: 'GET /v1/connector-accounts', kind: 'list', resource: 'connector_account', ok: 200, filter: () => 'status=enabled' },
  { route: 'GET /v1/connector-accounts/:id', kind: 'read', resource: 'connector_account', ok: 200 },
  { route: 'PATCH /v1/connector-accounts/:id', kind: 'write', resource: 'connector_account', ok: 200, body: () => ({ metadata: { changed: 'yes' } }) },
  { route: 'DELETE /v1/connector-accounts/:id', kind: 'write', resource: 'connector_account', ok: 200 },
  {
    route: 'POST /v1/reconciliation-runs',
    kind: 'create',
    resource: 'reconciliation_run',
    ok: 201,
    // Live mode's connector account (GoCardless) has no records to reconcile: refused, after the tenancy checks of its refs.
    okLive: 400,
    body: (w, me) => ({ connector_account: ownAccount(w, me) }),
    refs: [{ param: 'connector_account', resource: 'connector_account', body: (_w, _me, id) => ({ connector_account: id }) }],
  },
  { route: 'GET /v1/reconciliation-runs', kind: 'list', resource: 'reconciliation_run', ok: 200, filter: (w, them) => `connector_account=${ownAccount(w, them)}` },
  { route: 'GET /v1/reconciliation-runs/:id', kind: 'read', resource: 'reconciliation_run', ok: 200 },
];
