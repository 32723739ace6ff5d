// What route modules share with the app that registers them: the app's type and the one way a
// finished outcome is sent. Kept apart from app.ts so that routes never import the module that
// imports them.
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Outcome } from '../kernel/context.js';

export type App = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

export function sendOutcome(reply: FastifyReply, outcome: Outcome) {
  if (outcome.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(outcome.status).type('application/json; charset=utf-8').send(outcome.body);
}
