// A POST that starts a movement (a payment, a refund, a capture, a void, a mandate, a card
// verification, a dispute's acceptance): always under a required Idempotency-Key, answered with
// the movement's object as it stands (or the replayed answer), and handed to the movement engine
// (src/movement/engine.ts), which the route's `start` only describes to. Written once, so that
// every such route documents its key, its answer and its errors the same way.
import type { FastifyContextConfig } from 'fastify';
import { Type, type Static, type TSchema } from 'typebox';
import type { App } from '../types.js';
import { sendOutcome } from '../types.js';
import type { RequestContext } from '../../kernel/context.js';
import type { ErrorCode } from '../../kernel/errors.js';
import { bodyOptional, errorResponses, IdempotencyHeader } from '../../kernel/schemas.js';
import { runMovement, type NewMovement } from '../../movement/engine.js';
import type { MovementRow } from '../../movement/row.js';
import type { Db } from '../../storage/db.js';
import type { Runtime } from '../../runtime.js';

export interface MovementRoute<B extends TSchema, P extends TSchema, Row extends MovementRow, Request> {
  path: string;
  /** Beyond `idempotency: 'required'`: a deferred key, the fingerprint's redaction. */
  config?: Omit<FastifyContextConfig, 'idempotency'>;
  /** A body that may be left out (read as `{}`). */
  bodyOptional?: boolean;
  tags: string[];
  operationId: string;
  summary: string;
  description: string;
  params?: P;
  body: B;
  /** The status and shared schema of the answer: 201 with a new object, 200 with the one acted on. */
  answer: [201 | 200, string];
  errors: ErrorCode[];
  start(ctx: RequestContext, body: Static<B>, params: Static<P>): NewMovement<Row, Request>;
}

export function registerMovementRoute<B extends TSchema, P extends TSchema, Row extends MovementRow, Request>(
  app: App,
  db: Db,
  rt: Runtime,
  route: MovementRoute<B, P, Row, Request>,
): void {
  const [status, schema] = route.answer;
  app.post(
    route.path,
    {
      config: { ...route.config, idempotency: 'required' },
      ...(route.bodyOptional ? { preValidation: bodyOptional } : {}),
      schema: {
        tags: route.tags,
        operationId: route.operationId,
        summary: route.summary,
        description: route.description,
        ...(route.params ? { params: route.params } : {}),
        body: route.body,
        headers: IdempotencyHeader(true),
        response: { [status]: Type.Ref(schema), ...errorResponses(...route.errors) },
      },
    },
    async (req, reply) => sendOutcome(reply, await runMovement(db, rt, req.ctx, route.start(req.ctx, req.body as Static<B>, req.params as Static<P>))),
  );
}
