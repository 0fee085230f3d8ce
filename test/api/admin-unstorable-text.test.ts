// Text no database can store, sent to the admin routes over HTTP to a listening app: a NUL ("\u0000", which PostgreSQL
// refuses in text and jsonb) or a lone UTF-16 surrogate ("\ud800", which jsonb refuses and text silently turns into
// U+FFFD), in a value, a nested value or a property name, of a field the route reads or one it ignores. Every
// state-changing admin route of the app's route document is tried, so a route added later is tried too. Each answers
// 400 with the code a merchant route gives for the same input (INVALID_IDEMPOTENCY_KEY for an idempotency key,
// INVALID_REQUEST otherwise) and changes nothing: every table is as it was, but for the audit log's record of the
// refusal (decisions 102, 192), which names the caller, the action and the code, and keeps nothing of what was sent.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_MERCHANT_ID } from '../../src/core/merchants/merchants.js';
import { createPayment, createTestContext, SOL_ADDRESS, type TestContext } from '../helpers/context.js';

type Json = Record<string, unknown>;
type Operation = { parameters?: Json[]; requestBody?: { content?: { 'application/json'?: { schema?: Json } } } };

let t: TestContext;
let base: string;
let held: string;
let event: string;
let routeDocument: Json;

beforeAll(async () => {
  t = await createTestContext({ POLICY_APPROVAL_ABOVE_USD: '100' });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  held = await createPayment(t.app, 500); // waits for an approval
  event = (await t.db.pool.query('SELECT id FROM webhook_events ORDER BY created_at LIMIT 1')).rows[0].id;
  routeDocument = (await (await fetch(`${base}/openapi.json`)).json()) as Json;
});
afterAll(async () => t.close());

const STATE_CHANGING = ['post', 'put', 'patch', 'delete'];

/** Every state-changing admin operation of the app's route document: [METHOD, path template, operation]. */
function adminOperations(): [string, string, Operation][] {
  return Object.entries(routeDocument.paths as Record<string, Record<string, Operation>>).flatMap(([path, item]) =>
    path.startsWith('/admin/') ? STATE_CHANGING.filter((m) => item[m] !== undefined).map((m) => [m.toUpperCase(), path, item[m]!] as [string, string, Operation]) : [],
  );
}

/** A real target for each path parameter, so that a route that did not refuse would act on something. */
function urlOf(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (name === 'chain') return 'solana';
    if (name === 'address') return SOL_ADDRESS;
    if (path.startsWith('/admin/merchants/')) return TEST_MERCHANT_ID;
    if (path.startsWith('/admin/webhook-events/')) return event;
    return held;
  });
}

/** A body the route would accept, as raw JSON text, so that the text under test is the only thing wrong with it. */
const VALID_BODIES: Record<string, Json> = {
  'POST /admin/withdrawals': { chain: 'solana', to: SOL_ADDRESS, amount_usdc: '1', idempotency_key: 'withdrawal-1' },
  'POST /admin/chain-health': { chain: 'solana', health_status: 'healthy', avg_confirmation_seconds: 2 },
  'POST /admin/merchants/{id}/addresses': { chain: 'solana', address: SOL_ADDRESS, label: 'payroll' },
  'POST /admin/payments/{id}/resolve': { resolution: 'retry' },
  'POST /admin/payments/{id}/refund': { tx_id: 'tx_1' },
  'POST /admin/payment_intents/{id}/approve': { reason: 'checked' },
  'POST /admin/payment_intents/{id}/reject': { reason: 'checked' },
};

/** A schema, or the component its `$ref` names. */
function resolved(schema: Json): Json {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  return ((routeDocument.components as Json).schemas as Record<string, Json>)[ref.split('/').at(-1)!]!;
}

/** The string properties of a body schema, nested objects included, as paths. */
function stringFields(schema: Json | undefined, at: string[] = []): string[][] {
  const properties = (schema?.properties ?? {}) as Record<string, Json>;
  return Object.entries(properties).flatMap(([name, declared]) => {
    const property = resolved(declared);
    const types = ([] as unknown[]).concat(property.type ?? []);
    if (types.includes('object')) return stringFields(property, [...at, name]);
    return types.includes('string') ? [[...at, name]] : [];
  });
}

function withValue(body: Json, path: string[], raw: string): string {
  // The escape goes into the JSON text as written (JSON.stringify would keep a lone surrogate escaped the same way).
  const marker = '__UNSTORABLE__';
  const copy = structuredClone(body);
  let node = copy;
  for (const name of path.slice(0, -1)) node = (node[name] ??= {}) as Json;
  node[path.at(-1)!] = marker;
  return JSON.stringify(copy).replace(`"${marker}"`, `"${raw}"`);
}

interface Case {
  what: string;
  body: string;
  code: string;
}

const UNSTORABLE = { NUL: 'a\\u0000b', 'a lone surrogate': 'a\\ud800b' };

/** Every unstorable text a route's body can carry: in each field it reads, in a field it ignores, deep down, in a name. */
function casesOf(route: string, operation: Operation): Case[] {
  const body = VALID_BODIES[route] ?? {};
  const schema = operation.requestBody?.content?.['application/json']?.schema;
  return Object.entries(UNSTORABLE).flatMap(([what, raw]) => [
    ...stringFields(schema).map((path) => ({
      what: `${what} in ${path.join('.')}`,
      body: withValue(body, path, raw),
      code: path.at(-1) === 'idempotency_key' ? 'INVALID_IDEMPOTENCY_KEY' : 'INVALID_REQUEST',
    })),
    { what: `${what} in a field the route ignores`, body: withValue(body, ['note'], raw), code: 'INVALID_REQUEST' },
    { what: `${what} deep in an array`, body: withValue(body, ['extra', 'list'], raw).replace(`"${raw}"`, `[1, {"x": ["${raw}"]}]`), code: 'INVALID_REQUEST' },
    { what: `${what} in a property name`, body: JSON.stringify(body).replace(/^\{/, `{"avg_confirmation_seconds${raw}": 1${Object.keys(body).length ? ',' : ''}`), code: 'INVALID_REQUEST' },
  ]);
}

/** A digest of every row of every table (the audit log and the request counters of decision 217 apart), and the audit log's records. */
async function snapshot(): Promise<{ tables: Record<string, string>; audit: Json[] }> {
  const { rows: tables } = await t.db.pool.query<{ schema: string; name: string }>(
    "SELECT table_schema AS schema, table_name AS name FROM information_schema.tables WHERE table_schema IN ('public', 'pgboss') AND table_type = 'BASE TABLE' AND table_name NOT IN ('audit_log', 'audit_head', 'rate_limit_windows')",
  );
  const digests: Record<string, string> = {};
  for (const { schema, name } of tables) {
    const { rows } = await t.db.pool.query(`SELECT md5(COALESCE(string_agg(r::text, '|' ORDER BY r::text), '')) AS d FROM "${schema}"."${name}" r`);
    digests[`${schema}.${name}`] = rows[0].d;
  }
  const { rows: audit } = await t.db.pool.query('SELECT seq, actor, action, targets, details, outcome FROM audit_log ORDER BY seq');
  return { tables: digests, audit };
}

describe('unstorable text in an admin request', () => {
  it('a withdrawal\'s idempotency key follows the merchant routes\' rules: a control character or a blank key is refused', async () => {
    const before = await snapshot();
    for (const [key, code] of [
      ['a\\u0001b', 'INVALID_IDEMPOTENCY_KEY'],
      ['   ', 'MISSING_IDEMPOTENCY_KEY'],
    ]) {
      const body = JSON.stringify({ ...VALID_BODIES['POST /admin/withdrawals'], idempotency_key: '__KEY__' }).replace('"__KEY__"', `"${key}"`);
      const response = await fetch(`${base}/admin/withdrawals`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect([key, response.status, ((await response.json()) as Json).code]).toEqual([key, 400, code]);
    }
    expect((await snapshot()).tables).toEqual(before.tables);
  });

  it('answers 400 with the merchant routes\' code on every state-changing admin route, and changes nothing', { timeout: 60_000 }, async () => {
    const operations = adminOperations();
    // The route document lists the routes this test is about: if it lost them, the test would prove nothing.
    expect(operations.map(([method, path]) => `${method} ${path}`)).toEqual(expect.arrayContaining(Object.keys(VALID_BODIES)));
    const before = await snapshot();
    const wrong: string[] = [];
    let sent = 0;
    let refusedAs: string[] = [];
    for (const [method, path, operation] of operations) {
      const route = `${method} ${path}`;
      for (const c of casesOf(route, operation)) {
        const response = await fetch(`${base}${urlOf(path)}`, { method, headers: { 'content-type': 'application/json' }, body: c.body });
        const answer = (await response.json().catch(() => null)) as Json | null;
        sent++;
        if (response.status !== 400 || answer?.code !== c.code || answer?.statusCode !== 400 || answer?.error !== 'Bad Request' || typeof answer?.message !== 'string') {
          wrong.push(`${route}, ${c.what}: ${response.status} ${String(answer?.code)}`);
        }
        if (path !== '/admin/chain-health') refusedAs.push(`${route} refused:${c.code}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(sent).toBeGreaterThan(50);

    const after = await snapshot();
    expect(after.tables).toEqual(before.tables);
    // The refusals of the identified caller (loopback in development) are recorded (the open route's anonymous ones
    // are not), each without the text it refused: nothing of the request but the route and the code.
    const records = after.audit.slice(before.audit.length);
    const actionOf = new Map(after.audit.map((r) => [r.seq, r.action]));
    expect(records.map((r) => r.details)).toEqual(records.map(() => ({})));
    expect(records.map((r) => r.targets)).toEqual(records.map(() => []));
    expect(records.every((r) => r.actor === 'local' && actionOf.get(r.seq) !== undefined)).toBe(true);
    refusedAs = refusedAs.map((line) => line.split(' refused:')[1]!);
    expect(records.map((r) => String(r.outcome).replace('refused:', ''))).toEqual(refusedAs);
  });

  it('a NUL in a query string or a path parameter answers 400 INVALID_REQUEST too', async () => {
    const before = await snapshot();
    for (const url of ['/admin/payments?q=a%00b', '/admin/approvals?limit=1%00', `/admin/merchants/${TEST_MERCHANT_ID}/addresses/solana/a%00b`]) {
      const method = url.includes('/addresses/') ? 'DELETE' : 'GET';
      const response = await fetch(`${base}${url}`, { method });
      expect([url, response.status, ((await response.json()) as Json).code]).toEqual([url, 400, 'INVALID_REQUEST']);
    }
    expect((await snapshot()).tables).toEqual(before.tables);
  });

  it('every string an admin route reads is bounded: a body field, a query parameter, a path parameter', () => {
    // A pattern bounds a string when it is anchored at both ends and repeats nothing without a limit.
    const boundedPattern = (pattern: unknown) =>
      typeof pattern === 'string' && pattern.startsWith('^') && pattern.endsWith('$') && !/[*+]|\{\d+,\}/.test(pattern.replace(/\\./g, ''));
    const unbounded: string[] = [];
    const visit = (schema: Json | undefined, where: string): void => {
      if (!schema) return;
      const types = ([] as unknown[]).concat(schema.type ?? []);
      if (types.includes('string') && schema.maxLength === undefined && schema.enum === undefined && !boundedPattern(schema.pattern)) unbounded.push(where);
      for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) visit(property, `${where}.${name}`);
      if (schema.items) visit(schema.items as Json, `${where}[]`);
    };
    for (const [path, item] of Object.entries(routeDocument.paths as Record<string, Record<string, Operation>>)) {
      if (!path.startsWith('/admin/')) continue;
      for (const [method, operation] of Object.entries(item)) {
        for (const parameter of operation.parameters ?? []) visit(parameter.schema as Json, `${method.toUpperCase()} ${path} ${String(parameter.in)} ${String(parameter.name)}`);
        visit(operation.requestBody?.content?.['application/json']?.schema, `${method.toUpperCase()} ${path} body`);
      }
    }
    expect(unbounded).toEqual([]);
  });
});
