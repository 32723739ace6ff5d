// HTTP surface of connector accounts and the connector catalogue: validate, call one service
// function, shape the answer.
import { Type, type Static, type TSchema } from 'typebox';
import type { Outcome, RequestContext } from '../../kernel/context.js';
import type { App } from '../types.js';
import { sendOutcome } from '../types.js';
import type { Db } from '../../storage/db.js';
import { bodyOptional, errorResponses, IdParam, IdempotencyHeader, NoParameters } from '../../kernel/schemas.js';
import {
  ConnectorCatalogue,
  CreateConnectorAccountBody,
  DeletedConnectorAccount,
  ListConnectorAccountsQuery,
  UpdateConnectorAccountBody,
} from '../../domain/connector-accounts/schema.js';
import {
  connectorAccountReads,
  connectorCatalogue,
  createConnectorAccount,
  deleteConnectorAccount,
  updateConnectorAccount,
} from '../../domain/connector-accounts/service.js';
import type { Runtime } from '../../runtime.js';
import { registerReadRoutes } from './reads.js';

const ACCOUNT_ID_EXAMPLE = 'ca_01jd8x3v0pe7wbz0m4k6f2n9qa';
const AccountId = IdParam(ACCOUNT_ID_EXAMPLE);
const Account = Type.Ref('ConnectorAccount');
const tags = ['connector accounts'];

/** The OpenAPI side every route of this file shares. */
const described = <R extends object>(operationId: string, summary: string, rest: R) => ({ tags, operationId, summary, ...rest });

export function registerConnectorAccountRoutes(app: App, db: Db, rt: Runtime) {
  app.get(
    '/v1/connectors',
    {
      schema: described('listConnectors', 'The connector catalogue: each processor, its capabilities and the credentials it takes', {
        response: { 200: ConnectorCatalogue, ...errorResponses() },
      }),
    },
    async () => connectorCatalogue(rt),
  );

  app.post(
    '/v1/connector-accounts',
    {
      config: { idempotency: 'optional' },
      schema: described('createConnectorAccount', 'Connect a processor account: its credentials, checked for shape and sealed (never returned)', {
        body: CreateConnectorAccountBody,
        headers: IdempotencyHeader(false),
        response: { 201: Account, ...errorResponses() },
      }),
    },
    async (req, reply) => sendOutcome(reply, await createConnectorAccount(db, rt, req.ctx, req.body)),
  );

  const reads = connectorAccountReads(rt);
  registerReadRoutes(app, {
    path: '/v1/connector-accounts', tags, schema: 'ConnectorAccount', names: ['connector account', 'connector accounts'], idExample: ACCOUNT_ID_EXAMPLE,
    query: ListConnectorAccountsQuery, retrieve: (ctx, id) => reads.retrieve(db, ctx, id), list: (from, ctx, query) => reads.list(from, ctx, query),
  });

  // PATCH and DELETE of one account: its id in the path, an outcome as the answer.
  const onOne = <B extends TSchema>(
    method: 'PATCH' | 'DELETE',
    schema: { operationId: string; summary: string; description?: string; body: B; response: Record<number, TSchema> },
    run: (ctx: RequestContext, id: string, body: Static<B>) => Promise<Outcome>,
  ) =>
    app.route({
      method,
      url: '/v1/connector-accounts/:id',
      ...(method === 'DELETE' ? { preValidation: bodyOptional } : {}),
      schema: { tags, params: AccountId, ...schema },
      handler: async (req, reply) => sendOutcome(reply, await run(req.ctx, (req.params as { id: string }).id, req.body as Static<B>)),
    });

  onOne(
    'PATCH',
    {
      operationId: 'updateConnectorAccount',
      summary: 'Update a connector account: name, credentials (rotate), status, metadata',
      description:
        'Credentials given replace the stored ones field by field. A new webhook secret leaves the previous one verifying for grace_period_seconds. ' +
        'A disabled account takes no new payments; what it already holds still settles. Other processes apply the change within ROUTING_CACHE_TTL_MS.',
      body: UpdateConnectorAccountBody,
      response: { 200: Account, ...errorResponses('resource_missing') },
    },
    (ctx, id, body) => updateConnectorAccount(db, rt, ctx, id, body),
  );
  onOne(
    'DELETE',
    {
      operationId: 'deleteConnectorAccount',
      summary: "Delete a connector account (refused with 422 connector_account_in_use while this mode's routing rules name it)",
      body: NoParameters,
      response: { 200: DeletedConnectorAccount, ...errorResponses('resource_missing', 'connector_account_in_use') },
    },
    (ctx, id) => deleteConnectorAccount(db, rt, ctx, id),
  );
}
