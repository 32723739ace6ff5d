// HTTP surface of the balance and its transactions (the ledger seen from the merchant's side).
import { Type } from 'typebox';
import type { App } from '../types.js';
import type { Db } from '../../storage/db.js';
import { errorResponses, ListOf } from '../../kernel/schemas.js';
import { ListBalanceTransactionsQuery } from '../../ledger/schema.js';
import { listBalanceTransactions, retrieveBalance } from '../../ledger/balance.js';

const tags = ['balance'];

export function registerBalanceRoutes(app: App, db: Db) {
  app.get(
    '/v1/balance',
    {
      schema: {
        tags,
        operationId: 'retrieveBalance',
        summary: "Retrieve the account's balance in this mode",
        description: 'Per currency: `available` (succeeded payments credit it at once), `pending`, and `reserved` (refunds and payouts in flight).',
        response: { 200: Type.Ref('Balance'), ...errorResponses() },
      },
    },
    async (req) => retrieveBalance(db, req.ctx),
  );

  app.get(
    '/v1/balance-transactions',
    {
      schema: {
        tags,
        operationId: 'listBalanceTransactions',
        summary: 'List the movements of the balance (journal entries), newest first',
        querystring: ListBalanceTransactionsQuery,
        response: { 200: ListOf(Type.Ref('BalanceTransaction')), ...errorResponses() },
      },
    },
    async (req) => req.read((from) => listBalanceTransactions(from, req.ctx, req.query)),
  );
}
