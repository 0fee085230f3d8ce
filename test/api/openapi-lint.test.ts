// GET /openapi.json through the linters clients run: Spectral's `spectral:oas` and the OWASP API security ruleset
// (decision 211). No error, and no warning but the accepted ones, each only where its reason holds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { lintOpenApi, type LintFinding } from '../helpers/spectral.js';

/** The spec's admin endpoints that need no credentials (src/api/admin-access.ts), and /health. */
const OPEN_OPERATIONS = ['/health.get', '/admin/overview.get', '/admin/route-distribution.get', '/admin/failures.get', '/admin/chain-health.post'];
/** Objects whose properties are data, not a fixed shape: counts by status, chain details, event payloads, audit details. */
const FREE_FORM_OBJECTS = [
  'paths./payout_batches/{id}.get.responses.200.content.application/json.schema.properties.payments_by_status.additionalProperties',
  'paths./admin/payment-counts.get.responses.200.content.application/json.schema.properties.by_status.additionalProperties',
  'paths./admin/payments/{id}.get.responses.200.content.application/json.schema.properties.attempts.items.properties.chain_meta.additionalProperties',
  'paths./admin/payments/{id}.get.responses.200.content.application/json.schema.properties.webhook_events.items.properties.payload.additionalProperties',
  'paths./admin/webhook-events/{id}.get.responses.200.content.application/json.schema.properties.payload.additionalProperties',
  'paths./admin/audit.get.responses.200.content.application/json.schema.properties.data.items.properties.details.additionalProperties',
];

/** `paths./admin/overview.get.responses` -> `/admin/overview.get`. */
function operationOf(path: string): string {
  const [, route, method] = /^paths\.(\/.*?)\.(get|post|put|patch|delete)(?:\.|$)/.exec(path) ?? [];
  return route === undefined ? path : `${route}.${method}`;
}

/** The accepted warnings (decision 211): where each may appear; a warning anywhere else fails. */
const ACCEPTED: Record<string, (f: LintFinding) => boolean> = {
  // Self-hosted: the operator's contact and base URL are the deployment's, not the project's.
  'info-contact': (f) => f.path === 'info',
  'oas3-api-servers': (f) => f.path === '',
  // Each operation's summary says what it does.
  'operation-description': (f) => f.path.startsWith('paths.'),
  // Free text (messages, names, addresses of any chain, reasons): bounded in length, no pattern would be true.
  'owasp:api4:2023-string-restricted': () => true,
  // /health answers load balancers and probes, which hold no credentials.
  'owasp:api2:2023-read-restricted': (f) => operationOf(f.path) === '/health.get',
  // Routes that need no credentials cannot answer 401.
  'owasp:api8:2023-define-error-responses-401': (f) => OPEN_OPERATIONS.includes(operationOf(f.path)),
  // Routes that take no body and no query, at most an id in the path: a malformed id is 404, as any unknown id is.
  'owasp:api8:2023-define-error-validation': (f) => takesNoInputButPath(operationOf(f.path)),
  'owasp:api3:2023-no-additionalProperties': (f) => FREE_FORM_OBJECTS.includes(f.path),
};

type Operation = { operationId?: string; security?: unknown[]; requestBody?: unknown; parameters?: Array<{ in: string }>; responses?: unknown };
let t: TestContext;
let findings: LintFinding[];
let document: { paths: Record<string, Record<string, Operation>> };

/** `/admin/me.get`: the operation has no request body and no parameter outside its path. */
function takesNoInputButPath(operation: string): boolean {
  const [path, method] = [operation.slice(0, operation.lastIndexOf('.')), operation.slice(operation.lastIndexOf('.') + 1)];
  const op = document.paths[path]?.[method];
  return op !== undefined && op.requestBody === undefined && (op.parameters ?? []).every((p) => p.in === 'path');
}

beforeAll(async () => {
  t = await createTestContext({}, { admin: true });
  const response = await t.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(response.statusCode).toBe(200);
  document = response.json();
  findings = await lintOpenApi(response.body);
}, 60_000);
afterAll(async () => {
  await t.close();
});

describe('GET /openapi.json under Spectral (spectral:oas, OWASP API security)', () => {
  it('has no error', () => {
    const errors = findings.filter((f) => f.severity === 'error').map((f) => `${f.code} at ${f.path}: ${f.message}`);
    expect(errors.slice(0, 20), `${errors.length} errors`).toEqual([]);
  });

  it('has exactly the accepted warnings, each only where its reason holds', () => {
    const warnings = findings.filter((f) => f.severity === 'warning');
    const unexpected = warnings.filter((f) => !(ACCEPTED[f.code]?.(f) ?? false)).map((f) => `${f.code} at ${f.path}: ${f.message}`);
    expect(unexpected.slice(0, 20), `${unexpected.length} unexpected warnings`).toEqual([]);
    // An accepted warning that no longer appears is a fix: take it off the list (and out of decision 211).
    expect(new Set(warnings.map((f) => f.code))).toEqual(new Set(Object.keys(ACCEPTED)));
  });

  it('names every operation, and asks for the admin token wherever admin routes need it', () => {
    const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));
    const ids = operations.map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]*$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(document.paths['/quotes']!.post!.operationId).toBe('createQuote');
    const refund = document.paths['/admin/payments/{id}/refund']!.post!;
    expect(refund.operationId).toBe('postAdminPaymentsByIdRefund');
    expect(refund.security).toEqual([{ adminToken: [] }]);
    expect(document.paths['/admin/overview']!.get!.security).toEqual([{}]);
  });

  it('documents the 400 of a route whose query is validated, as the route answers it', async () => {
    expect(document.paths['/admin/audit']!.get!).toHaveProperty(['responses', '400']);
    const refused = await t.app.inject({ method: 'GET', url: '/admin/audit?limit=many' });
    expect(refused.statusCode).toBe(400);
  });
});
