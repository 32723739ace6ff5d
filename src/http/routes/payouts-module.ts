// Registers beneficiaries and payouts on the app: their shared schemas ($id) and their routes.
// They share the runtime (connectors, router, clock, keys) of the process.
import type { App } from '../types.js';
import type { Db } from '../../storage/db.js';
import { addSharedSchema } from '../validation.js';
import { Beneficiary } from '../../domain/beneficiaries/schema.js';
import { Payout } from '../../domain/payouts/schema.js';
import type { Runtime } from '../../runtime.js';
import { registerBeneficiaryRoutes } from './beneficiaries.js';
import { registerPayoutRoutes } from './payouts.js';

export function registerPayoutsModule(app: App, db: Db, rt: Runtime): void {
  for (const schema of [Beneficiary, Payout]) {
    app.addSchema(schema);
    addSharedSchema(schema);
  }
  registerBeneficiaryRoutes(app, db, rt);
  registerPayoutRoutes(app, db, rt);
}
