// The two reads every API object has — GET {path}/:id and GET {path}, newest first and paged —
// described the same way for every object, so the OpenAPI document and the error statuses agree.
// Their operation ids are `retrieve<Schema>` and `list<Names>` (retrievePayout, listPayouts), the
// names of the service functions they call.
import { Type, type Static, type TSchema } from 'typebox';
import type { App } from '../types.js';
import type { RequestContext } from '../../kernel/context.js';
import type { Db } from '../../storage/db.js';
import type { Page } from '../../kernel/pagination.js';
import { errorResponses, IdParam, ListOf } from '../../kernel/schemas.js';

export interface ReadRoutes<Q extends TSchema> {
  /** The collection, e.g. `/v1/payment-orders`. */
  path: string;
  tags: string[];
  /** The shared schema the object is answered with (`PaymentOrder`). */
  schema: string;
  /** The object in the summaries, one and many: `['payment order', 'payment orders']`. */
  names: [string, string];
  /** An id for the documentation of `:id`. */
  idExample: string;
  query: Q;
  retrieve: (ctx: RequestContext, id: string) => Promise<unknown>;
  /** Given the database the read may go to: a replica when the caller's writes are on it (src/http/read-routing.ts). */
  list: (db: Db, ctx: RequestContext, query: Static<Q>) => Promise<Page<unknown>>;
}

const pascal = (words: string) => words.replace(/(?:^|\s+)(\w)/g, (_, letter: string) => letter.toUpperCase());

export function registerReadRoutes<Q extends TSchema>(app: App, routes: ReadRoutes<Q>): void {
  const { tags, names } = routes;
  const object = Type.Ref(routes.schema);
  app.get(
    `${routes.path}/:id`,
    {
      schema: {
        tags,
        operationId: `retrieve${routes.schema}`,
        summary: `Retrieve a ${names[0]}`,
        params: IdParam(routes.idExample),
        response: { 200: object, ...errorResponses('resource_missing') },
      },
    },
    async (req) => routes.retrieve(req.ctx, req.params.id),
  );
  app.get(
    routes.path,
    {
      schema: {
        tags,
        operationId: `list${pascal(names[1])}`,
        summary: `List ${names[1]}, newest first`,
        querystring: routes.query,
        response: { 200: ListOf(object), ...errorResponses() },
      },
    },
    async (req) => req.read((db) => routes.list(db, req.ctx, req.query as Static<Q>)),
  );
}
