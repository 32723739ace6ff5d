// HTTP surface of customers: validate, call one service function, shape the answer.
import { Type } from 'typebox';
import type { App } from '../types.js';
import { sendOutcome } from '../types.js';
import type { Db } from '../../storage/db.js';
import { bodyOptional, errorResponses, IdempotencyHeader, IdParam, NoParameters } from '../../kernel/schemas.js';
import { CreateCustomerBody, ListCustomersQuery, UpdateCustomerBody } from '../../domain/customers/schema.js';
import { createCustomer, deleteCustomer, listCustomers, retrieveCustomer, updateCustomer } from '../../domain/customers/service.js';
import type { Runtime } from '../../runtime.js';
import { registerReadRoutes } from './reads.js';

const CustomerRef = Type.Ref('Customer');
const tags = ['customers'];
const CUSTOMER_ID_EXAMPLE = 'cus_01jd8x3v0pe7wbz0m4k6f2n9qa';
const CustomerId = IdParam(CUSTOMER_ID_EXAMPLE);

export function registerCustomerRoutes(app: App, db: Db, rt: Pick<Runtime, 'now' | 'vault'>) {
  app.post(
    '/v1/customers',
    {
      config: { idempotency: 'optional' },
      schema: {
        tags,
        operationId: 'createCustomer',
        summary: 'Create a customer',
        description:
          'A customer can be named by payment orders (`customer: { "id": "cus_…" }`) and holds saved payment methods. `reference`, your own id ' +
          'for the customer, is unique per account and mode among customers not deleted: a clash is 422 reference_already_used.',
        body: CreateCustomerBody,
        headers: IdempotencyHeader(false),
        response: { 201: CustomerRef, ...errorResponses('reference_already_used') },
      },
    },
    async (req, reply) => sendOutcome(reply, await createCustomer(db, req.ctx, req.body, rt.now())),
  );

  registerReadRoutes(app, {
    path: '/v1/customers', tags, schema: 'Customer', names: ['customer', 'customers'], idExample: CUSTOMER_ID_EXAMPLE,
    query: ListCustomersQuery, retrieve: (ctx, id) => retrieveCustomer(db, ctx, id), list: (from, ctx, query) => listCustomers(from, ctx, query),
  });

  app.patch(
    '/v1/customers/:id',
    {
      schema: {
        tags,
        operationId: 'updateCustomer',
        summary: "Change a customer's email, name, reference or metadata",
        description: 'Orders already created keep the email and name they copied from the customer.',
        params: CustomerId,
        body: UpdateCustomerBody,
        response: { 200: CustomerRef, ...errorResponses('resource_missing', 'reference_already_used') },
      },
    },
    async (req, reply) => sendOutcome(reply, await updateCustomer(db, req.ctx, req.params.id, req.body, rt.now())),
  );

  app.delete(
    '/v1/customers/:id',
    {
      preValidation: bodyOptional,
      schema: {
        tags,
        operationId: 'deleteCustomer',
        summary: 'Delete a customer and detach its payment methods',
        description:
          'Every payment method the customer holds is detached (its card data erased; one payment_method.detached event each), then the ' +
          'customer is deleted (customer.deleted), all in one transaction. The customer is no longer shown (GET answers 404, a second ' +
          'DELETE too) and its reference is free again; orders that named it keep its id.',
        params: CustomerId,
        body: NoParameters,
        response: { 200: Type.Ref('DeletedCustomer'), ...errorResponses('resource_missing') },
      },
    },
    async (req, reply) => sendOutcome(reply, await deleteCustomer(db, rt.vault, req.ctx, req.params.id, rt.now())),
  );
}
