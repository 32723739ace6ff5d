// Registers beneficiaries and payouts on the app: their shared schemas ($id) and their routes.
// They share the payments runtime (connectors, router, clock) of the process.
import type { App } from '../types.js';
import type { Config } from '../../config.js';
import type { Db } from '../../storage/db.js';
import { addSharedSchema } from '../validation.js';
import { Beneficiary } from '../../domain/beneficiaries/schema.js';
import { Payout } from '../../domain/payouts/schema.js';
import { createPayoutsRuntime } from '../../domain/payouts/runtime.js';
import type { PaymentsRuntime } from '../../domain/payments/runtime.js';
import { registerBeneficiaryRoutes } from './beneficiaries.js';
import { registerPayoutRoutes } from './payouts.js';

export function registerPayoutsModule(app: App, db: Db, config: Config, payments: PaymentsRuntime): void {
  for (const schema of [Beneficiary, Payout]) {
    app.addSchema(schema);
    addSharedSchema(schema);
  }
  const prt = createPayoutsRuntime(config, payments);
  registerBeneficiaryRoutes(app, db, prt);
  registerPayoutRoutes(app, db, prt);
}
