// HTTP surface of disputes: cardholders' chargebacks as the processors report them (docs/disputes.md).
import type { App } from '../types.js';
import type { Db } from '../../storage/db.js';
import { ListDisputesQuery } from '../../domain/disputes/schema.js';
import { listDisputes, retrieveDispute } from '../../domain/disputes/service.js';
import { registerReadRoutes } from './reads.js';

const tags = ['disputes'];

export function registerDisputeRoutes(app: App, db: Db) {
  registerReadRoutes(app, {
    path: '/v1/disputes', tags, schema: 'Dispute', names: ['dispute', 'disputes'], idExample: 'dp_01jd8x3v0pe7wbz0m4k6f2n9qa',
    query: ListDisputesQuery, retrieve: (ctx, id) => retrieveDispute(db, ctx, id), list: (ctx, query) => listDisputes(db, ctx, query),
  });
}
