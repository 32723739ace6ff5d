// Registers customers and their saved payment methods on the app: their shared schemas ($id) and routes.
import type { App } from '../types.js';
import type { Db } from '../../storage/db.js';
import { addSharedSchema } from '../validation.js';
import { Customer, DeletedCustomer } from '../../domain/customers/schema.js';
import { PaymentMethod } from '../../domain/payment-methods/schema.js';
import type { Runtime } from '../../runtime.js';
import { registerCustomerRoutes } from './customers.js';
import { registerPaymentMethodRoutes } from './payment-methods.js';

export function registerCustomersModule(app: App, db: Db, rt: Pick<Runtime, 'now' | 'vault'>): void {
  for (const schema of [Customer, DeletedCustomer, PaymentMethod]) {
    app.addSchema(schema);
    addSharedSchema(schema);
  }
  registerCustomerRoutes(app, db, rt);
  registerPaymentMethodRoutes(app, db, rt);
}
