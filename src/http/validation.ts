// Request validation. Bodies are checked strictly (no type coercion, unknown fields rejected,
// nothing removed behind the caller's back); query strings and path parameters arrive as text, so
// their validator coerces "10" to 10. Ajv's first error becomes one typed API error with `param`.
import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';
import { ApiError } from '../kernel/errors.js';

// ajv-formats ships CommonJS whose default export NodeNext sees one level deeper.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({
    allErrors: false,
    removeAdditional: false,
    useDefaults: true,
    strict: false,
    ...options,
  });
  addFormats(ajv);
  // RFC 3339 admits a leap second (23:59:60) that Date cannot represent, and years (0000, or
  // 9999 pushed past by an offset) that PostgreSQL refuses as written by toISOString; a timestamp
  // the service cannot store is refused here instead of failing later as a 500.
  const rfc3339 = ajv.formats['date-time'] as { validate: (value: string) => boolean };
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (value: string) => {
      if (!rfc3339.validate(value)) return false;
      const ms = Date.parse(value);
      return ms >= EARLIEST_STORABLE_MS && ms <= LATEST_STORABLE_MS;
    },
  });
  return ajv;
}

const EARLIEST_STORABLE_MS = Date.parse('0001-01-01T00:00:00Z');
const LATEST_STORABLE_MS = Date.parse('9999-12-31T23:59:59.999Z');

// `discriminator`: a oneOf told apart by a property is checked against the one branch it names.
const bodyAjv = makeAjv({ coerceTypes: false, discriminator: true });
const textAjv = makeAjv({ coerceTypes: true });

// PostgreSQL stores neither U+0000 (text and jsonb) nor unpaired UTF-16 surrogates (jsonb), so a
// string holding one is a validation error rather than a 500 from the database.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

// Most strings hold none of these code units: one character class rules them out before the
// exact check (with its lookarounds) runs, and a field's path is spelt only for the one refused.
const MAYBE_UNSTORABLE = /[\u0000\ud800-\udfff]/;
const unstorable = (text: string) => MAYBE_UNSTORABLE.test(text) && UNSTORABLE.test(text);

function unstorableString(value: unknown, instancePath: string): ErrorObject | undefined {
  const at = unstorableAt(value);
  if (at === undefined) return undefined;
  return {
    instancePath: instancePath + at,
    schemaPath: '#',
    keyword: 'text',
    params: {},
    message: 'must not contain NUL characters or unpaired UTF-16 surrogates',
  };
}

/** Where below `value` the first unstorable string is (a bad key: the object holding it), or undefined. */
function unstorableAt(value: unknown): string | undefined {
  if (typeof value === 'string') return unstorable(value) ? '' : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  for (const key of Object.keys(value)) {
    if (unstorable(key)) return '';
    const found = unstorableAt((value as Record<string, unknown>)[key]);
    if (found !== undefined) return `/${key.replace(/~/g, '~0').replace(/\//g, '~1')}${found}`;
  }
  return undefined;
}

/**
 * Ajv refuses a discriminator's `mapping` (the document's way to name each branch's schema); the
 * branches' `const` tags say the same, so the validator gets the schema without it.
 */
function withoutMappings(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutMappings);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'discriminator' && value && typeof value === 'object') {
      const { mapping: _mapping, ...rest } = value as Record<string, unknown>;
      copy[key] = rest;
    } else copy[key] = withoutMappings(value);
  }
  return copy;
}

/**
 * Ajv's discriminator error names the tag but not the values it admits: they are the keys of the
 * discriminator's mapping (in the schema as written), so the answer can list them.
 */
function withAllowedValues(root: object, errors: ErrorObject[] | null | undefined): ErrorObject[] | null | undefined {
  return errors?.map((e) => {
    if (e.keyword !== 'discriminator') return e;
    const path = e.schemaPath.replace(/^#\//, '').split('/');
    const at = path.reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], root) as
      | { mapping?: Record<string, string> }
      | undefined;
    return { ...e, params: { ...e.params, allowedValues: Object.keys(at?.mapping ?? {}) } };
  });
}

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : textAjv;
  const validate = ajv.compile(withoutMappings(schema) as object);
  if (httpPart !== 'body' && httpPart !== 'querystring') return validate as never;
  const checked = (data: unknown) => {
    if (!validate(data)) {
      checked.errors = withAllowedValues(schema as object, validate.errors);
      return false;
    }
    const found = unstorableString(data, '');
    checked.errors = found ? [found] : null;
    return !found;
  };
  checked.errors = null as ErrorObject[] | null | undefined;
  return checked as never;
};

export function addSharedSchema(schema: object): void {
  // The validators are shared by every app in the process (tests build several): replace, not add twice.
  const id = (schema as { $id?: string }).$id;
  for (const ajv of [bodyAjv, textAjv]) {
    if (id !== undefined) ajv.removeSchema(id);
    ajv.addSchema(schema);
  }
}

function joinPath(instancePath: string, last?: string): string {
  const parts = instancePath.split('/').filter(Boolean).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (last !== undefined) parts.push(last);
  return parts.join('.');
}

/** Turns fastify's validation failure into the API's typed error. */
export function validationError(errors: FastifySchemaValidationError[], context: string): ApiError {
  // A bad property name yields the inner keyword's error first; the propertyNames one names the key.
  const err = (errors.find((e) => e.keyword === 'propertyNames') ?? errors[0]) as unknown as ErrorObject;
  if (context === 'headers') {
    // The only header with a schema is Idempotency-Key; its errors have their own codes.
    return new ApiError(err.keyword === 'required' ? 'idempotency_key_missing' : 'idempotency_key_invalid');
  }
  const where = context === 'querystring' ? 'query ' : '';
  if (err.keyword === 'required') {
    const param = joinPath(err.instancePath, (err.params as { missingProperty: string }).missingProperty);
    return new ApiError('parameter_missing', { param, message: `Missing required ${where}parameter: ${param}.` });
  }
  if (err.keyword === 'additionalProperties') {
    const param = joinPath(err.instancePath, (err.params as { additionalProperty: string }).additionalProperty);
    return new ApiError('parameter_unknown', { param, message: `Unknown ${where}parameter: ${param}.` });
  }
  if (context === 'body' && err.instancePath === '' && err.keyword === 'type') {
    return new ApiError('body_missing', { message: 'The request body must be a JSON object.' });
  }
  if (err.keyword === 'discriminator') {
    const { tag, tagValue } = err.params as { tag: string; tagValue: unknown };
    const param = joinPath(err.instancePath, tag);
    if (tagValue === undefined) return new ApiError('parameter_missing', { param, message: `Missing required ${where}parameter: ${param}.` });
    const allowed = (err.params as { allowedValues?: string[] }).allowedValues ?? [];
    return new ApiError('parameter_invalid', { param, message: `${param} must be one of: ${allowed.join(', ')}.` });
  }
  if (err.keyword === 'propertyNames') {
    const param = joinPath(err.instancePath);
    const name = (err.params as { propertyName?: string }).propertyName;
    return new ApiError('parameter_invalid', { param, message: `${param} has an invalid key ${JSON.stringify(name)}: keys are 1 to 40 characters.` });
  }
  const param = joinPath(err.instancePath);
  let detail = err.message ?? 'is invalid';
  if (err.keyword === 'enum' && param === 'currency') detail = 'must be a supported ISO 4217 currency code in upper case';
  else if (err.keyword === 'enum') detail = `must be one of: ${(err.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
  else if (err.keyword === 'format') detail = `must be a valid ${(err.params as { format: string }).format}`;
  return new ApiError('parameter_invalid', { param: param || undefined, message: `${param || 'The body'} ${detail}.` });
}
