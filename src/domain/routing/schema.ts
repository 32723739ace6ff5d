// Request and response schemas of the routing configuration (GET/PUT /v1/routing).
import { Type, type Static } from 'typebox';
import { Currency, Timestamp } from '../../kernel/schemas.js';
import { MAX_AMOUNT } from '../../lib/currencies.js';

const ConnectorChoice = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, examples: ['simulator_a'] }),
    weight: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 1000,
        description: 'Share of the volume that tries this connector first, relative to the other weights of the rule. Unweighted connectors are fallbacks only.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const RoutingRuleSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    currencies: Type.Optional(Type.Array(Currency, { minItems: 1, maxItems: 200, uniqueItems: true, description: 'Matches these currencies only.' })),
    amount_min: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_AMOUNT, description: 'Matches amounts from this one (inclusive).' })),
    amount_max: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_AMOUNT, description: 'Matches amounts up to this one (inclusive).' })),
    payment_method_types: Type.Optional(
      Type.Array(Type.String({ enum: ['card', 'mandate', 'payout'] }), {
        minItems: 1,
        uniqueItems: true,
        description: 'Matches these only; `payout` matches payouts (POST /v1/payouts); `mandate` matches direct debits and mandate set-up (POST /v1/mandates). Without it the rule matches payments and payouts.',
      }),
    ),
    connectors: Type.Array(ConnectorChoice, {
      minItems: 1,
      maxItems: 10,
      description: 'Tried in order (first drawn by weight when weights are given); a retryable failure falls back to the next.',
    }),
  },
  { additionalProperties: false },
);

export const PutRoutingBody = Type.Object(
  { rules: Type.Array(RoutingRuleSchema, { maxItems: 50, description: 'The first rule that matches a payment decides its connectors.' }) },
  { additionalProperties: false },
);
export type PutRoutingBody = Static<typeof PutRoutingBody>;

export const Routing = Type.Object(
  {
    object: Type.Literal('routing'),
    livemode: Type.Boolean(),
    rules: Type.Array(RoutingRuleSchema),
    is_default: Type.Boolean({ description: 'True until the account sets its own rules for this mode.' }),
    connectors: Type.Array(
      Type.Object({ name: Type.String(), circuit: Type.String({ enum: ['closed', 'open', 'half_open'] }) }),
      { description: "The connectors usable in this mode and their circuit breaker's state, as seen by the answering process." },
    ),
    version: Type.Integer(),
    updated_at: Type.Union([Timestamp, Type.Null()]),
  },
  { $id: 'Routing', title: 'Routing' },
);
export type RoutingView = Static<typeof Routing>;
