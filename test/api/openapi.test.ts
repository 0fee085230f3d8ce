// GET /openapi.json as tools nobody here wrote read it: valid OpenAPI 3.0.3 for @apidevtools/swagger-parser, only
// 3.0 Schema Object forms, the error body as one shared component, and on every merchant operation examples that
// match their schemas and that the service itself accepts.
import { STATUS_CODES } from 'node:http';
import SwaggerParser from '@apidevtools/swagger-parser';
import AjvDraft04 from 'ajv-draft-04';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/domain/errors.js';
import { createTestContext, KEY, type TestContext } from '../helpers/context.js';

type Json = { [key: string]: unknown };
type Operation = Json & { tags?: string[]; parameters?: Json[]; requestBody?: Json; responses: Record<string, Json> };

// OpenAPI 3.0's Schema Object is draft-04 based (boolean exclusive bounds) plus `nullable`, which Ajv knows. The
// package is CommonJS: under NodeNext its class is the default export's `default`.
const Ajv = AjvDraft04.default;
const ERROR_REF = '#/components/schemas/Error';
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const MERCHANT_OPERATIONS = [
  'post /quotes',
  'post /payment_intents',
  'get /payment_intents/{id}',
  'post /payout_batches',
  'get /payout_batches/{id}',
  'get /routes/debug/{id}',
  'post /webhooks/test',
];

let t: TestContext;
let document: Json;
/** The same document with every $ref replaced by its target, for validating examples. */
let dereferenced: Json;

beforeAll(async () => {
  t = await createTestContext();
  const response = await t.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(response.statusCode).toBe(200);
  document = response.json();
  dereferenced = (await SwaggerParser.dereference(structuredClone(document) as never)) as unknown as Json;
});
afterAll(async () => {
  await t.close();
});

function operations(doc: Json): Array<[string, Operation]> {
  return Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m] !== undefined).map((m) => [`${m} ${path}`, item[m] as Operation] as [string, Operation]),
  );
}

function mediaOf(holder: Json | undefined): Json | undefined {
  return (holder?.content as Record<string, Json> | undefined)?.['application/json'];
}

/** Every Schema Object of the document with where it sits, nested ones included. */
function* schemas(value: unknown, where: string): Generator<[string, Json]> {
  if (typeof value !== 'object' || value === null) return;
  const schema = value as Json;
  yield [where, schema];
  for (const [name, property] of Object.entries((schema.properties as Json | undefined) ?? {})) yield* schemas(property, `${where}.${name}`);
  for (const key of ['items', 'additionalProperties', 'not']) yield* schemas(schema[key], `${where}/${key}`);
  for (const key of ['allOf', 'anyOf', 'oneOf']) {
    for (const [i, member] of ((schema[key] as unknown[] | undefined) ?? []).entries()) yield* schemas(member, `${where}/${key}/${i}`);
  }
}

function* documentSchemas(doc: Json): Generator<[string, Json]> {
  for (const [name, schema] of Object.entries(((doc.components as Json).schemas as Json) ?? {})) yield* schemas(schema, `components.${name}`);
  for (const [key, op] of operations(doc)) {
    for (const p of op.parameters ?? []) yield* schemas(p.schema, `${key} param ${String(p.name)}`);
    yield* schemas(mediaOf(op.requestBody)?.schema, `${key} body`);
    for (const [status, response] of Object.entries(op.responses)) yield* schemas(mediaOf(response)?.schema, `${key} ${status}`);
  }
}

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.0.3 document for @apidevtools/swagger-parser', async () => {
    expect(document.openapi).toBe('3.0.3');
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeTruthy();
  });

  it('uses only OpenAPI 3.0 Schema Object forms (no type arrays, numeric exclusive bounds, const, $id, examples)', () => {
    const violations: string[] = [];
    for (const [where, schema] of documentSchemas(document)) {
      if (Array.isArray(schema.type) || schema.type === 'null') violations.push(`${where}: type ${JSON.stringify(schema.type)}`);
      for (const key of ['exclusiveMinimum', 'exclusiveMaximum']) {
        if (key in schema && typeof schema[key] !== 'boolean') violations.push(`${where}: ${key} ${JSON.stringify(schema[key])}`);
      }
      for (const key of ['const', '$id', '$schema', 'examples', 'if', 'then', 'else', 'dependencies', 'patternProperties', 'contains']) {
        if (key in schema) violations.push(`${where}: ${key}`);
      }
    }
    expect(violations).toEqual([]);
    const amount = (mediaOf(operations(document).find(([k]) => k === 'post /quotes')![1].requestBody)!.schema as Json).properties as Json;
    expect(amount.amount_usd).toMatchObject({ type: 'number', minimum: 0, exclusiveMinimum: true });
  });

  it('every merchant operation requires the API key, has request and response examples, and answers errors with the shared Error component', () => {
    const errorComponent = ((document.components as Json).schemas as Json).Error as Json;
    expect(errorComponent).toMatchObject({ type: 'object', required: ['statusCode', 'error', 'message', 'code'] });
    const merchant = operations(document).filter(([, op]) => op.tags?.includes('merchant'));
    expect(merchant.map(([key]) => key).sort()).toEqual([...MERCHANT_OPERATIONS].sort());

    const missing: string[] = [];
    for (const [key, op] of merchant) {
      expect(op.security, key).toEqual([{ apiKey: [] }]);
      if (op.requestBody !== undefined && Object.keys((mediaOf(op.requestBody)?.examples as Json) ?? {}).length === 0) missing.push(`${key} request body`);
      for (const p of op.parameters ?? []) if (p.example === undefined) missing.push(`${key} parameter ${String(p.name)}`);
      for (const [status, response] of Object.entries(op.responses)) {
        const media = mediaOf(response);
        if (Object.keys((media?.examples as Json) ?? {}).length === 0) missing.push(`${key} ${status} examples`);
        if (response.description === 'Default Response') missing.push(`${key} ${status} description`);
        if (Number(status) >= 400) expect((media?.schema as Json).$ref, `${key} ${status}`).toBe(ERROR_REF);
      }
    }
    expect(missing).toEqual([]);
  });

  it('every example matches its schema; error examples carry a documented code under its own status', () => {
    const ajv = new Ajv({ strict: false, allErrors: true, formats: { 'date-time': /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/ } });
    const problems: string[] = [];
    let checked = 0;
    const check = (where: string, schema: unknown, value: unknown) => {
      checked++;
      const validate = ajv.compile(schema as object);
      if (!validate(value)) problems.push(`${where}: ${ajv.errorsText(validate.errors)}`);
    };
    for (const [key, op] of operations(dereferenced)) {
      for (const p of op.parameters ?? []) if (p.example !== undefined) check(`${key} ${String(p.name)}`, p.schema, p.example);
      const body = mediaOf(op.requestBody);
      for (const [name, example] of Object.entries((body?.examples as Record<string, Json>) ?? {})) check(`${key} request ${name}`, body!.schema, example.value);
      for (const [status, response] of Object.entries(op.responses)) {
        const media = mediaOf(response);
        for (const [name, example] of Object.entries((media?.examples as Record<string, Json>) ?? {})) {
          check(`${key} ${status} ${name}`, media!.schema, example.value);
          if (Number(status) < 400) continue;
          const value = example.value as { statusCode: number; error: string; code: keyof typeof ERROR_CODES };
          expect(ERROR_CODES[value.code], `${key} ${status} ${name}: ${value.code} is not a documented code`).toBe(Number(status));
          expect(value.statusCode, `${key} ${status} ${name}`).toBe(Number(status));
          expect(value.error, `${key} ${status} ${name}`).toBe(STATUS_CODES[Number(status)]);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(30);
  });

  it("the request examples are what the service accepts, and its replies match the documented 2xx schemas", async () => {
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    const byKey = new Map(operations(dereferenced));
    const conforms = (key: string, status: number, body: unknown) => {
      const validate = ajv.compile(mediaOf(byKey.get(key)!.responses[String(status)])!.schema as object);
      expect(validate(body), `${key} ${status}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    };
    const requestExamples = (key: string) =>
      Object.values(mediaOf(byKey.get(key)!.requestBody)!.examples as Record<string, { value: Json }>).map((e) => e.value);

    let quoteId = '';
    for (const example of requestExamples('post /quotes')) {
      const quote = await t.app.inject({ method: 'POST', url: '/quotes', headers: KEY, payload: example });
      expect(quote.statusCode, quote.body).toBe(201);
      conforms('post /quotes', 201, quote.json());
      quoteId = quote.json().quote_id;
    }
    // The quote id of the example is a stand-in: the real one goes in, the rest of the example as written.
    const [intentExample] = requestExamples('post /payment_intents');
    const created = await t.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { ...intentExample, quote_id: quoteId } });
    expect(created.statusCode, created.body).toBe(201);
    conforms('post /payment_intents', 201, created.json());
    const id = created.json().payment_intent_id as string;

    const read = await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY });
    expect(read.statusCode).toBe(200);
    conforms('get /payment_intents/{id}', 200, read.json());
    const debug = await t.app.inject({ method: 'GET', url: `/routes/debug/${id}`, headers: KEY });
    expect(debug.statusCode).toBe(200);
    conforms('get /routes/debug/{id}', 200, debug.json());

    for (const example of requestExamples('post /payout_batches')) {
      const batch = await t.app.inject({ method: 'POST', url: '/payout_batches', headers: KEY, payload: example });
      expect(batch.statusCode, batch.body).toBe(201);
      conforms('post /payout_batches', 201, batch.json());
      const progress = await t.app.inject({ method: 'GET', url: `/payout_batches/${batch.json().id}`, headers: KEY });
      expect(progress.statusCode).toBe(200);
      conforms('get /payout_batches/{id}', 200, progress.json());
    }
  });
});
