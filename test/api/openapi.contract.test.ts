// The served OpenAPI document as an integrator meets it: a client generated from it with
// openapi-typescript type-checks a full flow and an event narrowed by type, and refuses an
// unknown event type and a missing required field; every example in it validates against its
// own schema, and every request-body example passes the running service's validation.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import openapiTS, { astToString } from 'openapi-typescript';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { useService } from '../support/fixtures.js';

const h = useService();
const ROOT = path.resolve(import.meta.dirname, '../..');
const FIXTURES = path.join(ROOT, 'test', 'support', 'fixtures', 'sdk-compile');
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => Ajv2020;

type Doc = Record<string, any>;
const served = async (): Promise<Doc> => (await h.api.get('/v1/openapi.json')).body;

/** tsc's errors for `files` of a folder holding them and the generated `openapi.ts`, as `file:line TScode message`. */
function typeErrors(dir: string, files: string[]): string[] {
  const program = ts.createProgram(
    files.map((f) => path.join(dir, f)),
    { strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, skipLibCheck: true, types: [] },
  );
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    return `${d.file ? path.basename(d.file.fileName) : '?'}:${line} TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}

describe('the served OpenAPI document', () => {
  it('generates a client that types a full flow and event narrowing, and refuses an unknown event type and a missing field', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-compile-'));
    try {
      fs.writeFileSync(path.join(dir, 'openapi.ts'), astToString(await openapiTS((await served()) as never)));
      fs.writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}');
      fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
      for (const file of ['flow.ts', 'refused.ts']) fs.copyFileSync(path.join(FIXTURES, file), path.join(dir, file));

      expect(typeErrors(dir, ['flow.ts'])).toEqual([]);

      const refused = typeErrors(dir, ['refused.ts']);
      const lineOf = (marker: string) => fs.readFileSync(path.join(FIXTURES, 'refused.ts'), 'utf8').split('\n').findIndex((l) => l.includes(marker)) + 1;
      expect(refused).toHaveLength(3);
      expect(refused[0]).toMatch(new RegExp(`^refused\\.ts:${lineOf('error: unknown event type')} TS2322 Type '"definitely\\.not\\.an\\.event"' is not assignable`));
      expect(refused[1]).toMatch(new RegExp(`^refused\\.ts:${lineOf('error: amount is required') + 1} TS2\\d+ .*Property 'amount' is missing`));
      // payment_method is a union tagged by `type`: a card method cannot carry a mandate.
      expect(refused[2]).toMatch(new RegExp(`^refused\\.ts:${lineOf('error: a card method takes a card')} TS2\\d+ `));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000); // two TypeScript programs over the generated client: slow on a loaded machine

  it('describes payment_method as a oneOf of named schemas with a discriminator on type', async () => {
    const doc = await served();
    const method = doc.paths['/v1/payments'].post.requestBody.content['application/json'].schema.properties.payment_method;
    expect(method.oneOf).toEqual([
      { $ref: '#/components/schemas/CardPaymentMethodInput' },
      { $ref: '#/components/schemas/MandatePaymentMethodInput' },
      { $ref: '#/components/schemas/SavedCardPaymentMethodInput' },
    ]);
    expect(method.discriminator).toEqual({ propertyName: 'type', mapping: { card: method.oneOf[0].$ref, mandate: method.oneOf[1].$ref, saved_card: method.oneOf[2].$ref } });
    const tag = doc.components.schemas.CardPaymentMethodInput.properties.type;
    expect(tag.const ?? tag.enum).toEqual(tag.const ? 'card' : ['card']);
    expect(doc.components.schemas.MandatePaymentMethodInput.required).toEqual(['type', 'mandate']);
    expect(doc.components.schemas.SavedCardPaymentMethodInput.required).toEqual(['type', 'saved_card']);
  });

  it('holds only examples that validate against their own schema', async () => {
    const doc = await served();
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(doc, 'doc');
    const failures: string[] = [];
    let checked = 0;
    const check = (pointer: string, example: unknown) => {
      checked++;
      const validate = ajv.compile({ $ref: `doc#${pointer}` });
      if (!validate(example)) failures.push(`${pointer}: ${JSON.stringify(example)} ${ajv.errorsText(validate.errors)}`);
    };
    const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');
    const walk = (node: unknown, pointer: string) => {
      if (!node || typeof node !== 'object') return;
      const object = node as Doc;
      if (Array.isArray(object.examples)) for (const example of object.examples) check(pointer, example);
      else if (object.examples && object.schema) for (const example of Object.values(object.examples as Doc)) check(`${pointer}/schema`, example.value);
      if ('example' in object && object.schema) check(`${pointer}/schema`, object.example);
      for (const [key, child] of Object.entries(object)) if (key !== 'examples' && key !== 'example') walk(child, `${pointer}/${escape(key)}`);
    };
    walk(doc, '');
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it('holds request-body examples that the running service accepts (no 400)', async () => {
    const doc = await served();
    const sent: string[] = [];
    for (const [route, item] of Object.entries(doc.paths as Record<string, Doc>)) {
      for (const [method, operation] of Object.entries(item)) {
        const media = operation.requestBody?.content?.['application/json'];
        for (const [name, example] of Object.entries((media?.examples ?? {}) as Doc)) {
          // Path parameters take their documented example.
          const url = route.replace(/\{(\w+)\}/g, (_, param: string) => operation.parameters.find((p: Doc) => p.in === 'path' && p.name === param).example);
          const res = await h.api.request(method.toUpperCase(), url, { body: example.value, idempotencyKey: crypto.randomUUID() });
          expect(res.status, `${method} ${route} example ${name}: ${res.text}`).not.toBe(400);
          sent.push(`${method.toUpperCase()} ${route} ${name}`);
        }
      }
    }
    expect(sent).toEqual(expect.arrayContaining(['POST /v1/payments card', 'POST /v1/payments mandate', 'POST /v1/payment-orders order']));
  });
});
