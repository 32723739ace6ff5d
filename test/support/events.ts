// Checks events against the service's own OpenAPI document, as a client generated from it would
// see them: each event against `Event`, the oneOf discriminated by `type`.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats ships CommonJS whose default export NodeNext sees one level deeper.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => Ajv2020;

/** A function answering the schema violations of an event (none: an empty list). */
export function documentValidator(document: object): (event: unknown) => string[] {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema({ ...document, $id: 'openapi.json' });
  const validate = ajv.compile({ $ref: 'openapi.json#/components/schemas/Event' });
  return (event) => (validate(event) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`));
}
