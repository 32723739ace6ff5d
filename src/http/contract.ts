// What the OpenAPI document says about every operation beyond its own schemas, derived from the
// same facts the service acts on, so that the document cannot drift from the answers:
// - the error codes an operation can answer: the ones its route declares (errorResponses in
//   src/kernel/schemas.ts) plus the ones the shared hooks add (authentication, rate limit, request
//   validation, Idempotency-Key), grouped by status and named in each response's description;
// - the response headers every answer carries (Request-Id, RateLimit-*, Idempotent-Replayed,
//   Retry-After) as reusable components;
// - a body that an action without parameters may omit is not required.
import http from 'node:http';
import type { RouteOptions } from 'fastify';
import type { SwaggerTransform, SwaggerTransformObject } from '@fastify/swagger';
import { Type } from 'typebox';
import { ERROR_CATALOGUE, type ErrorCode } from '../kernel/errors.js';
import { ERROR_CODES_KEY, NoParameters } from '../kernel/schemas.js';

type Schema = Record<string, unknown>;

/** The codes every request to an authenticated route may meet before or around its handler. */
function impliedCodes(route: RouteOptions, schema: Schema): ErrorCode[] {
  const codes: ErrorCode[] = ['internal_error', 'service_unavailable'];
  if (route.config?.auth !== false) codes.push('api_key_missing', 'api_key_invalid', 'account_suspended', 'rate_limited');
  if (schema.body || schema.querystring || schema.params) codes.push('parameter_invalid', 'parameter_missing', 'parameter_unknown');
  if (schema.body) {
    codes.push('body_invalid_json', 'body_too_large', 'unsupported_media_type');
    if (schema.body !== NoParameters) codes.push('body_missing');
  }
  const idempotency = route.config?.idempotency;
  if (idempotency) codes.push('idempotency_key_invalid', 'idempotency_key_reused', 'idempotency_key_in_use');
  if (idempotency === 'required') codes.push('idempotency_key_missing');
  // A public route without parameters (health) refuses only what no route accepts.
  if (codes.length === 2) codes.push('headers_too_large');
  return codes;
}

/** A schema's name as prose: 'PaymentOrder' (or '#/components/schemas/PaymentOrder') is 'payment order'. */
const prose = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1).replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();

function describeSuccess(status: string, body: Schema): string {
  const ref = typeof body.$ref === 'string' ? body.$ref : undefined;
  const items = (body.properties as Schema | undefined)?.data as Schema | undefined;
  const listed = typeof (items?.items as Schema | undefined)?.$ref === 'string' ? ((items!.items as Schema).$ref as string) : undefined;
  const properties = (body.properties ?? {}) as Record<string, Schema>;
  const tag = properties.object?.const ?? (properties.object?.enum as unknown[] | undefined)?.[0];
  const object = typeof tag === 'string' ? tag.replaceAll('_', ' ') : undefined;
  const inline = object ? `the ${properties.deleted ? 'deleted ' : ''}${object}` : typeof body.title === 'string' ? `the ${body.title}` : 'the answer';
  const what = ref ? `the ${prose(ref)}` : listed ? `a page of ${prose(listed)} objects, newest first` : inline;
  return `${http.STATUS_CODES[Number(status)] ?? status}: ${what}.`;
}

/**
 * The route's schema with an example Idempotency-Key, so that a request the reference generates
 * works when pasted: one key per operation (`create-payment-order-1`), since the service refuses
 * a key that another request used.
 */
function withKeyExample(schema: Schema): Schema {
  const headers = schema.headers as Schema | undefined;
  const properties = headers?.properties as Record<string, Schema> | undefined;
  const key = properties?.['idempotency-key'];
  if (!key || typeof schema.operationId !== 'string') return schema;
  const example = `${schema.operationId.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}-1`;
  return { ...schema, headers: { ...headers, properties: { ...properties, 'idempotency-key': { ...key, examples: [example] } } } };
}

/**
 * @fastify/swagger's per-route `transform`: the route's responses with every error status it can
 * answer, each described by its codes. Only the document changes; the route keeps its schemas.
 */
export const documentRoute: SwaggerTransform = ({ schema: routeSchema, url, route }) => {
  const declaredSchema = routeSchema as Schema;
  if (!declaredSchema || declaredSchema.hide) return { schema: declaredSchema, url };
  const schema = withKeyExample(declaredSchema);
  const declared = (schema.response ?? {}) as Record<string, Schema>;
  const codes = new Set<ErrorCode>(impliedCodes(route, schema));
  const response: Record<string, Schema> = {};
  for (const [status, body] of Object.entries(declared)) {
    const own = body[ERROR_CODES_KEY] as ErrorCode[] | undefined;
    if (own) for (const code of own) codes.add(code);
    else {
      const description = (body.description as string | undefined) ?? describeSuccess(status, body);
      // @fastify/swagger reads a referenced body's description from the reference itself (it
      // resolves the reference without its other keys) and an inline body's from the extension.
      response[status] = typeof body.$ref === 'string' ? { ...body, description } : { ...body, 'x-response-description': description };
    }
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERROR_CATALOGUE[code].status, [...(byStatus.get(ERROR_CATALOGUE[code].status) ?? []), code]);
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const described = list.map((code) => `\`${code}\``).join(', ');
    response[status] = { ...Type.Ref('Error'), description: `${http.STATUS_CODES[status]}: ${described}.` };
  }
  const summary = typeof schema.summary === 'string' ? schema.summary : undefined;
  return { schema: { ...schema, description: schema.description ?? (summary ? `${summary}.` : undefined), response }, url };
};

const header = (description: string, schema: Schema) => ({ description, schema });

/** The headers of the service's answers, referred to from every response that carries them. */
export const RESPONSE_HEADERS = {
  'Request-Id': header('The id of this request (req_…); quote it when asking about a request.', { type: 'string' }),
  'RateLimit-Limit': header("The burst size of the API key's token bucket.", { type: 'integer' }),
  'RateLimit-Remaining': header('Requests left in the bucket after this one.', { type: 'integer' }),
  'RateLimit-Reset': header('Seconds until the bucket is full again.', { type: 'integer' }),
  'RateLimit-Policy': header('The bucket: `<per second>;w=1;burst=<burst>`.', { type: 'string' }),
  'Idempotent-Replayed': header('`true` when this is the stored answer to an earlier request with the same Idempotency-Key.', { type: 'string', enum: ['true'] }),
  'Retry-After': header('Seconds to wait before retrying (with the same Idempotency-Key for a POST).', { type: 'integer' }),
} as const;

type HeaderName = keyof typeof RESPONSE_HEADERS;

/** Which headers an answer of `status` carries, for an operation that is or is not authenticated and idempotent. */
function headersFor(status: number, authenticated: boolean, idempotent: boolean): HeaderName[] {
  const names: HeaderName[] = ['Request-Id'];
  const beforeHandler = status === 401 || status === 403;
  // Authentication fails before the rate limiter is asked.
  if (authenticated && !beforeHandler) names.push('RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy');
  // Answers that let the key go (409, 429, 5xx) are never stored, so never replayed.
  if (idempotent && !beforeHandler && status < 500 && status !== 409 && status !== 429) names.push('Idempotent-Replayed');
  if (status === 429 || status === 503) names.push('Retry-After');
  return names;
}

type Operation = { security?: unknown[]; parameters?: { in: string; name: string }[]; requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> }; responses?: Record<string, Schema>; tags?: string[] };

/** Every tag a route uses, titled as the reference shows it and described; a tag missing here is described by its own name. */
const TAGS: Record<string, string> = {
  Balance: 'What the account holds per currency, and the transactions that moved it.',
  Beneficiaries: 'The people and companies payouts are sent to, with their bank accounts.',
  'Connector accounts': "The account's own credentials at a processor.",
  Captures: "Money taken from a manual payment's authorisation, in one capture or several.",
  Disputes: "Cardholders' chargebacks of payments, as the processors report them: deadline, evidence, outcome and the money they take.",
  Connectors: 'The processors the service can route to, and what each needs.',
  Customers: 'The people who pay: named by payment orders, holding saved payment methods.',
  Events: 'Everything that happened to the objects of an account, in order; also sent to webhook endpoints.',
  Health: 'Liveness and readiness of the service; no API key needed.',
  Mandates: 'Direct-debit authorisations given by a customer.',
  'Payment orders': 'What a customer is asked to pay: amount, currency and its lifecycle.',
  'Payment methods': "Customers' saved cards: a summary of the card; the card itself is never shown.",
  Payments: 'Attempts to pay a payment order with a card or a mandate.',
  Payouts: 'Money sent from the balance to a beneficiary.',
  Refunds: 'Money given back on a succeeded payment.',
  Routing: 'The rules choosing the connector for each payment.',
  'Test helpers': 'Test mode only: move objects to the outcome you want to see.',
  'Webhook endpoints': 'Where the service sends events, signed with the endpoint secret (Standard Webhooks).',
  Webhooks: 'Processors’ notifications to the service.',
};

/** Routes name their tags in lower case ('payment orders'); the reference shows them as titles. */
const titled = (tag: string) => tag.charAt(0).toUpperCase() + tag.slice(1);

/** @fastify/swagger's `transformObject`: header components and references, optional empty bodies, declared tags. */
export function documentHeaders(): SwaggerTransformObject {
  return (document) => {
    const openapiObject = (document as { openapiObject: Schema }).openapiObject;
    const components = (openapiObject.components ??= {}) as Schema;
    components.headers = RESPONSE_HEADERS;
    const used = new Set<string>();
    for (const item of Object.values((openapiObject.paths ?? {}) as Record<string, Record<string, Operation>>)) {
      for (const operation of Object.values(item)) {
        const authenticated = !(Array.isArray(operation.security) && operation.security.length === 0);
        const idempotent = (operation.parameters ?? []).some((p) => p.in === 'header' && p.name === 'idempotency-key');
        for (const [status, answer] of Object.entries(operation.responses ?? {})) {
          answer.headers = Object.fromEntries(headersFor(Number(status), authenticated, idempotent).map((name) => [name, { $ref: `#/components/headers/${name}` }]));
        }
        const body = operation.requestBody?.content?.['application/json']?.schema;
        if (body && body.additionalProperties === false && Object.keys((body.properties as Schema | undefined) ?? {}).length === 0) operation.requestBody!.required = false;
        operation.tags = operation.tags?.map(titled);
        for (const tag of operation.tags ?? []) used.add(tag);
      }
    }
    openapiObject.tags = [...used].sort().map((name) => ({ name, description: TAGS[name] ?? name }));
    return openapiObject as ReturnType<SwaggerTransformObject>;
  };
}
