// Registers everything of payments, refunds, routing, connector accounts, balance and inbound processor webhooks on
// the app: their shared schemas ($id) and their routes. The runtime is the process's own,
// shared with the worker.
import type { App } from '../types.js';
import type { Config } from '../../config.js';
import type { Db } from '../../storage/db.js';
import { addSharedSchema } from '../validation.js';
import { CardMethodInput, MandateMethodInput, Payment, SavedCardMethodInput } from '../../domain/payments/schema.js';
import { Refund } from '../../domain/refunds/schema.js';
import { Routing } from '../../domain/routing/schema.js';
import { Balance, BalanceTransaction } from '../../ledger/schema.js';
import type { Runtime } from '../../runtime.js';
import { registerPaymentRoutes } from './payments.js';
import { registerRefundRoutes } from './refunds.js';
import { registerCaptureRoutes } from './captures.js';
import { registerDisputeRoutes } from './disputes.js';
import { registerReconciliationRoutes } from './reconciliation.js';
import { registerRoutingRoutes } from './routing.js';
import { registerBalanceRoutes } from './balance.js';
import { registerConnectorWebhookRoutes } from './connector-webhooks.js';
import { registerPaymentTestHelperRoutes } from './test-helpers.js';
import { registerMandateRoutes } from './mandates.js';
import { registerConnectorAccountRoutes } from './connector-accounts.js';
import { registerPaymentActionRoutes } from './payment-actions.js';
import { ConnectorAccount, ConnectorSchema } from '../../domain/connector-accounts/schema.js';
import type { RateLimiter } from '../rate-limiter.js';

export function registerPaymentsModule(app: App, db: Db, config: Config, rt: Runtime, limiter?: RateLimiter): void {
  for (const schema of [CardMethodInput, MandateMethodInput, SavedCardMethodInput, Payment, Refund, Routing, Balance, BalanceTransaction, ConnectorAccount, ConnectorSchema]) {
    app.addSchema(schema);
    addSharedSchema(schema);
  }
  registerPaymentRoutes(app, db, rt, config);
  registerPaymentActionRoutes(app, db, rt);
  registerRefundRoutes(app, db, rt);
  registerCaptureRoutes(app, db, rt);
  registerReconciliationRoutes(app, db, rt);
  registerDisputeRoutes(app, db, rt);
  registerRoutingRoutes(app, db, rt);
  registerBalanceRoutes(app, db);
  registerConnectorWebhookRoutes(app, db, rt, limiter && { limiter, config });
  registerConnectorAccountRoutes(app, db, rt);
  registerPaymentTestHelperRoutes(app, db, rt);
  registerMandateRoutes(app, db, config, rt);
}
