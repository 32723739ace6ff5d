// HTTP surface of reconciliation runs (docs/reconciliation.md). One create endpoint, two bodies:
// JSON names a connector account whose records are fetched (Stripe, the simulators); text/csv is
// an uploaded Adyen Settlement details report, its connector account in the query. The upload is
// read as it arrives, bounded by REPORT_LIMIT_BYTES (413 beyond), and the request-body deadline
// (src/http/body-deadline.ts) counts only time without progress, so a large report arriving
// steadily is never cut.
import { Type } from 'typebox';
import type { App } from '../types.js';
import { sendOutcome } from '../types.js';
import type { Db } from '../../storage/db.js';
import { ApiError } from '../../kernel/errors.js';
import { errorResponses, IdempotencyHeader } from '../../kernel/schemas.js';
import type { Runtime } from '../../runtime.js';
import { addSharedSchema } from '../validation.js';
import { CreateReconciliationRunBody, ListReconciliationRunsQuery, ReconciliationRun, REPORT_LIMIT_BYTES, ReportQuery } from '../../domain/reconciliation/schema.js';
import { listReconciliationRuns, retrieveReconciliationRun, runReconciliation } from '../../domain/reconciliation/service.js';
import { registerReadRoutes } from './reads.js';

const tags = ['reconciliation'];

export function registerReconciliationRoutes(app: App, db: Db, rt: Runtime) {
  app.addSchema(ReconciliationRun);
  addSharedSchema(ReconciliationRun);
  app.register(async (scope) => {
    scope.addContentTypeParser('text/csv', { parseAs: 'string', bodyLimit: REPORT_LIMIT_BYTES }, (_req, body, done) => done(null, body));
    scope.post<{ Body: CreateReconciliationRunBody | string; Querystring: { connector_account?: string; period_start?: string; period_end?: string } }>(
      '/v1/reconciliation-runs',
      {
        config: { idempotency: 'optional' },
        bodyLimit: REPORT_LIMIT_BYTES,
        schema: {
          tags,
          operationId: 'createReconciliationRun',
          summary: "Reconcile a connector account's settlement records with the ledger",
          description:
            `JSON: the connector account's records for the period are fetched (Stripe balance transactions, the simulators' report). text/csv: the body is Adyen's Settlement details report (at most ${REPORT_LIMIT_BYTES / 1024 / 1024} MiB), the connector account in the query. ` +
            'Matches each record with our payment, capture, refund, dispute or payout by our id, lists the exceptions, and books the processor fees found once (processor_fee ledger lines): running a period again books nothing twice. A report that cannot be read (malformed, truncated, a missing column, another merchant account, a currency mismatch) is 400 report_invalid naming the line or column; nothing is booked.',
          querystring: ReportQuery,
          body: { content: { 'application/json': { schema: CreateReconciliationRunBody }, 'text/csv': { schema: Type.String({ description: "Adyen's Settlement details report." }) } } },
          headers: IdempotencyHeader(false),
          response: { 201: Type.Ref('ReconciliationRun'), ...errorResponses('resource_missing', 'report_invalid', 'body_too_large', 'processor_unavailable') },
        },
      },
      async (req, reply) => {
        const body = req.body;
        if (typeof body === 'string') {
          const connector = req.query.connector_account;
          if (!connector) throw new ApiError('parameter_missing', { param: 'connector_account', message: 'With a text/csv report, name its connector account in the query: ?connector_account=ca_…' });
          return sendOutcome(reply, await runReconciliation(db, rt, req.ctx, { ...req.query, connector_account: connector, report: body }));
        }
        if (!body) throw new ApiError('body_missing');
        return sendOutcome(reply, await runReconciliation(db, rt, req.ctx, body));
      },
    );
  });
  registerReadRoutes(app, {
    path: '/v1/reconciliation-runs', tags, schema: 'ReconciliationRun', names: ['reconciliation run', 'reconciliation runs'], idExample: 'rec_01jd8x3v0pe7wbz0m4k6f2n9qa',
    query: ListReconciliationRunsQuery, retrieve: (ctx, id) => retrieveReconciliationRun(db, ctx, id), list: (from, ctx, query) => listReconciliationRuns(from, ctx, query),
  });
}
