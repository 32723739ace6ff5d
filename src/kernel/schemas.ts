// Schemas shared by many routes. They are plain JSON Schema (built with typebox), so the same
// object validates requests, types the handlers and documents the API in OpenAPI.
import { Type, type TProperties, type TSchema } from 'typebox';
import { CURRENCY_CODES, MAX_AMOUNT, MIN_AMOUNT } from './currencies.js';
import { ERROR_CATALOGUE, type ErrorCode } from './errors.js';

export const Amount = Type.Integer({
  minimum: MIN_AMOUNT,
  maximum: MAX_AMOUNT,
  description: "Integer in the currency's minor unit (cents for USD, yen for JPY, fils for KWD).",
  examples: [1999],
});

export const Currency = Type.String({
  enum: [...CURRENCY_CODES],
  description: 'ISO 4217 alphabetic code, upper case.',
  examples: ['EUR'],
});

// Record keys as `[\s\S]`, not typebox's default `^.*$`: `.` skips line terminators, so a key holding
// one would escape the value rules on input and be dropped by the serialiser on output.
const MetadataKey = Type.String({ pattern: '^[\\s\\S]*$' });

/** Metadata in responses: every key, whatever it holds. */
export const MetadataView = Type.Record(MetadataKey, Type.String());

export const Metadata = Type.Record(
  MetadataKey,
  Type.String({ maxLength: 500 }),
  {
    maxProperties: 50,
    propertyNames: { minLength: 1, maxLength: 40 },
    description: 'Up to 50 string keys (at most 40 characters) with string values (at most 500 characters).',
  },
);

export const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339 UTC with milliseconds.' });

export function IdParam(example: string) {
  return Type.Object({ id: Type.String({ examples: [example] }) });
}

/**
 * The last fields of every object that changes: its version, then when it was created and last
 * changed. The version's description differs between objects only because the published document
 * says so.
 */
export function Versioned(versionDescription?: string) {
  return {
    version: Type.Integer(versionDescription === undefined ? {} : { description: versionDescription }),
    created_at: Timestamp,
    updated_at: Timestamp,
  };
}

const ListQueryBase = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
  starting_after: Type.Optional(Type.String({ description: 'An id: return the objects older than it.' })),
  ending_before: Type.Optional(Type.String({ description: 'An id: return the objects newer than it.' })),
  'created[gte]': Type.Optional(Timestamp),
  'created[lte]': Type.Optional(Timestamp),
};

/**
 * The query string of a list endpoint: the paging parameters (src/kernel/pagination.ts), then its
 * own filters, all optional. Anything else is refused, so a misspelt filter is an error and not a
 * list silently left unfiltered.
 */
export function ListQuery<P extends TProperties>(filters: P) {
  return Type.Object({ ...ListQueryBase, ...filters }, { additionalProperties: false });
}

/** An optional list filter on one of `values` (a status, a type). */
export function OneOf(values: readonly string[]) {
  return Type.Optional(Type.String({ enum: [...values] }));
}

/** An optional list filter by another object's id; the service checks its prefix. */
export const IdFilter = Type.Optional(Type.String({ minLength: 1, maxLength: 64 }));

export function ListOf<T extends TSchema>(item: T) {
  return Type.Object({ object: Type.Literal('list'), data: Type.Array(item), has_more: Type.Boolean() });
}

export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      type: Type.String({ enum: ['validation', 'authentication', 'eligibility', 'processing', 'rate-limit'] }),
      code: Type.String({ enum: Object.keys(ERROR_CATALOGUE) }),
      message: Type.String(),
      param: Type.Optional(Type.String()),
      request_id: Type.String(),
    }),
  },
  { $id: 'Error', title: 'Error' },
);

/**
 * Named examples of a request body, shown by the document as the body's examples (@fastify/swagger
 * reads `x-examples`); test/api/openapi.contract.test.ts sends each to the service.
 */
export function bodyExamples(examples: Record<string, { summary: string; value: unknown }>) {
  return { 'x-examples': examples };
}

/** Where a route's declared error codes sit in its response schemas, for src/http/contract.ts. */
export const ERROR_CODES_KEY = 'x-error-codes';

/**
 * The error codes an operation's own work can answer (its domain's refusals: resource_missing,
 * invalid_state…), grouped by status. The codes every route shares (authentication, rate limit,
 * validation, Idempotency-Key, outage) are added by src/http/contract.ts from the route's config.
 */
export function errorResponses(...codes: ErrorCode[]) {
  const byStatus: Record<number, ErrorCode[]> = {};
  for (const code of codes) (byStatus[ERROR_CATALOGUE[code].status] ??= []).push(code);
  return Object.fromEntries(Object.entries(byStatus).map(([status, own]) => [status, { ...Type.Ref('Error'), [ERROR_CODES_KEY]: own }]));
}

/**
 * The Idempotency-Key header of a POST: required on the ones that move money, honoured when present
 * on the others (docs/api-conventions.md, idempotency).
 */
export const IdempotencyHeader = (required: boolean) =>
  Type.Object({
    'idempotency-key': required
      ? Type.String({ minLength: 1, maxLength: 255, description: 'Unique per intended action; a retry with the same key never acts twice.' })
      : Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  });

/**
 * The body of an action that takes no parameters (cancel, revoke, delete): none at all, or `{}`;
 * anything else is refused like any unknown field, instead of being silently ignored.
 */
export const NoParameters = Type.Object({}, { additionalProperties: false, description: 'No parameters: send no body, or `{}`.' });

/** preValidation for routes whose body is optional: no body at all means `{}`. */
export const bodyOptional = async (req: { body: unknown }) => {
  if (req.body === undefined || req.body === null) req.body = {};
};
