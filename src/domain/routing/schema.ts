// Request and response schemas of the routing configuration (GET/PUT /v1/routing).
import { Type, type Static } from 'typebox';
import { Currency, Timestamp } from '../../kernel/schemas.js';
import { MAX_AMOUNT } from '../../kernel/currencies.js';
import { ROUTING_STRATEGIES, SKIP_REASONS } from '../../storage/routing-rules.js';
import { DECLINE_TYPES } from '../../kernel/decline-types.js';

const ConnectorChoice = Type.Object(
  {
    name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        examples: ['stripe-eu'],
        description: "A connector account's name in this mode, or in test mode a built-in simulator (simulator_a, simulator_b). Answers show the account's current name.",
      }),
    ),
    connector_account: Type.Optional(
      Type.String({ maxLength: 64, examples: ['ca_01jd8x3v0pe7wbz0m4k6f2n9qa'], description: 'A connector account by its id, instead of (or agreeing with) name.' }),
    ),
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

const Cascade = Type.Object(
  {
    on: Type.Array(Type.String({ enum: [...DECLINE_TYPES] }), {
      minItems: 1,
      uniqueItems: true,
      description:
        'The decline types sent on to the next connector of the rule: `retry_later`, `generic`, `authentication_required` (retried with 3-D Secure on an on-session payment with a return_url), `processor`. `do_not_retry` and `fix_data` are refused.',
    }),
    max_attempts: Type.Integer({ minimum: 1, maximum: 5, description: 'Attempts of one payment in all, the first included: 1 to 5.' }),
  },
  {
    additionalProperties: false,
    description: 'Cascading retries (docs/declines.md): a payment declined with one of `on` becomes a new attempt at the next connector that has not declined it. Unset: a decline ends the payment.',
  },
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
    strategy: Type.Optional(
      Type.String({
        enum: [...ROUTING_STRATEGIES],
        description:
          'How the connectors are ordered (docs/routing.md): `priority`, the list order; `volume_split`, drawn by weight; `success_rate`, the best recent ' +
          "authorisation rate in the payment's segment, with exploration, and the list order while the segment has too few outcomes. Default: " +
          '`volume_split` when weights are given, else `priority`.',
      }),
    ),
    connectors: Type.Array(ConnectorChoice, {
      minItems: 1,
      maxItems: 10,
      description:
        'Tried in order (first drawn by weight when weights are given); a retryable failure falls back to the next. A rule lists at most as many ' +
        'connectors as can be called twice over within IDEMPOTENCY_LOCK_TIMEOUT_S at CONNECTOR_TIMEOUT_MS each (2 with the defaults); a cascade retrying ' +
        '`authentication_required` calls one connector once more, and counts it.',
    }),
    cascade: Type.Optional(Cascade),
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
      Type.Object({
        name: Type.String(),
        connector: Type.String({ description: 'The processor, as the catalogue (GET /v1/connectors) names it.' }),
        connector_account: Type.Union([Type.String(), Type.Null()], { description: 'Null for a built-in simulator.' }),
        circuit: Type.String({ enum: ['closed', 'open', 'half_open'] }),
      }),
      {
        description:
          "What rules may name in this mode — its enabled connector accounts whose processor this version reaches, and in test mode the built-in simulators — with their circuit breaker's state, as seen by the answering process.",
      },
    ),
    version: Type.Integer(),
    updated_at: Type.Union([Timestamp, Type.Null()]),
  },
  { $id: 'Routing', title: 'Routing' },
);
export type RoutingView = Static<typeof Routing>;

export const RoutingExplanation = Type.Object(
  {
    rule: Type.Union([Type.String(), Type.Null()], { description: 'The rule that matched: its name, else its place in GET /v1/routing (`rules.0`).' }),
    strategy: Type.String({ enum: [...ROUTING_STRATEGIES] }),
    candidates: Type.Array(
      Type.Object({
        connector: Type.String({ description: 'As attempts name it: a connector account id (ca_…) or a built-in simulator.' }),
        score: Type.Optional(Type.Number({ description: 'success_rate in a warm segment: recent authorisation rate plus an exploration bonus; the highest goes first.' })),
        skipped: Type.Optional(
          Type.String({
            enum: [...SKIP_REASONS],
            description: 'Why it was left out (or, breaker_open, put last under success_rate and skipped while its circuit stays open).',
          }),
        ),
      }),
      { description: 'The rule\'s connectors in the order considered, then those left out.' },
    ),
    chosen: Type.Union([Type.String(), Type.Null()], { description: 'The connector of the final attempt; before any, the first planned.' }),
  },
  { title: 'RoutingExplanation', description: 'Why the payment went where it went (docs/routing.md).' },
);

const Segment = {
  card_brand: Type.Union([Type.String(), Type.Null()], { description: 'Null for direct debits.' }),
  currency: Currency,
  issuing_country: Type.Union([Type.String(), Type.Null()], { description: 'Null where not known (no issuer data from the card alone).' }),
};

export const RoutingStats = Type.Object(
  {
    object: Type.Literal('routing_stats'),
    livemode: Type.Boolean(),
    window: Type.Object({
      since: Timestamp,
      max_payments: Type.Integer({ description: "The window holds at most the mode's latest this many payments." }),
    }),
    data: Type.Array(
      Type.Object({
        connector: Type.String(),
        ...Segment,
        attempts: Type.Integer({ minimum: 0, description: 'Attempts whose outcome was learnt (succeeded, declined, error, timeout).' }),
        authorized: Type.Integer({ minimum: 0 }),
        authorization_rate: Type.Number({ minimum: 0, maximum: 1 }),
      }),
    ),
  },
  { $id: 'RoutingStats', title: 'RoutingStats' },
);
export type RoutingStatsView = Static<typeof RoutingStats>;
