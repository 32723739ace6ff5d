// Registers everything of payments, refunds, routing, balance and inbound processor webhooks on
// the app: their shared schemas ($id) and their routes. Without a runtime from the caller (the
// service builds one per process and shares it with the worker) the app builds its own.
import type { App } from '../types.js';
import type { Config } from '../../config.js';
import type { Db } from '../../storage/db.js';
import { addSharedSchema } from '../validation.js';
import { Payment } from '../../domain/payments/schema.js';
import { Refund } from '../../domain/refunds/schema.js';
import { Routing } from '../../domain/routing/schema.js';
import { Balance, BalanceTransaction } from '../../ledger/schema.js';
import { createPaymentsRuntime, type PaymentsRuntime } from '../../domain/payments/runtime.js';
import { registerPaymentRoutes } from './payments.js';
import { registerRefundRoutes } from './refunds.js';
import { registerRoutingRoutes } from './routing.js';
import { registerBalanceRoutes } from './balance.js';
import { registerConnectorWebhookRoutes } from './connector-webhooks.js';
import { registerPaymentTestHelperRoutes } from './test-helpers.js';
import { registerMandateRoutes } from './mandates.js';

export function registerPaymentsModule(app: App, db: Db, config: Config, runtime?: PaymentsRuntime): PaymentsRuntime {
  for (const schema of [Payment, Refund, Routing, Balance, BalanceTransaction]) {
    app.addSchema(schema);
    addSharedSchema(schema);
  }
  let rt = runtime;
  if (!rt) {
    const own = createPaymentsRuntime(config.payments, { idempotencyLockTimeoutS: config.idempotencyLockTimeoutS, db });
    app.addHook('onClose', async () => own.close());
    rt = own;
  }
  registerPaymentRoutes(app, db, rt, config);
  registerRefundRoutes(app, db, rt);
  registerRoutingRoutes(app, db, rt);
  registerBalanceRoutes(app, db);
  registerConnectorWebhookRoutes(app, db, rt);
  registerPaymentTestHelperRoutes(app, db, rt);
  registerMandateRoutes(app, db, config, rt);
  return rt;
}
