// The two reads every API object has — GET {path}/:id and GET {path}, newest first and paged —
// described the same way for every object, so the OpenAPI document and the error statuses agree.
import { Type, type Static, type TSchema } from 'typebox';
import type { App } from '../types.js';
import type { RequestContext } from '../../kernel/context.js';
import type { Page } from '../../kernel/pagination.js';
import { errorResponses, IdParam, ListOf } from '../../kernel/schemas.js';

export interface ReadRoutes<Q extends TSchema> {
  /** The collection, e.g. `/v1/payouts`. */
  path: string;
  tags: string[];
  /** The shared schema the object is answered with (`Payout`). */
  schema: string;
  /** An id for the documentation of `:id`. */
  idExample: string;
  retrieve: { operationId: string; summary: string; run: (ctx: RequestContext, id: string) => Promise<unknown> };
  list: { operationId: string; summary: string; query: Q; run: (ctx: RequestContext, query: Static<Q>) => Promise<Page<unknown>> };
}

export function registerReadRoutes<Q extends TSchema>(app: App, routes: ReadRoutes<Q>): void {
  const { tags, retrieve, list } = routes;
  const object = Type.Ref(routes.schema);
  app.get(
    `${routes.path}/:id`,
    {
      schema: {
        tags,
        operationId: retrieve.operationId,
        summary: retrieve.summary,
        params: IdParam(routes.idExample),
        response: { 200: object, ...errorResponses(404) },
      },
    },
    async (req) => retrieve.run(req.ctx, req.params.id),
  );
  app.get(
    routes.path,
    {
      schema: {
        tags,
        operationId: list.operationId,
        summary: list.summary,
        querystring: list.query,
        response: { 200: ListOf(object), ...errorResponses() },
      },
    },
    async (req) => list.run(req.ctx, req.query as Static<Q>),
  );
}
