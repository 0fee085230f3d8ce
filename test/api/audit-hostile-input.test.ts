// An audit record never fails on what a client sent (issue 35, section 5): a fuzzer's body with a lone surrogate in
// a key the route ignores, or a NUL in a value, used to reach the audit record's jsonb and answer 500 (`invalid input
// syntax for type json`). Whatever the route answers for such input, it is not a 500, and the log still verifies.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAudit } from '../../src/core/operators/audit-verify.js';
import { createTestContext, type TestContext } from '../helpers/context.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => t?.close());

const bodies = [
  '{"chain":"solana","health_status":"degraded","avg_confirmation_seconds\\ud800":1}',
  '{"chain":"solana","health_status":"degraded","note":"nul\\u0000here","k\\u0000":{"\\udc00":["\\ud800"]}}',
];

describe('hostile text in an audited admin request', () => {
  it.each(bodies)('POST /admin/chain-health with %s answers without a 500, and the audit log verifies', async (payload) => {
    const res = await t.app.inject({ method: 'POST', url: '/admin/chain-health', headers: { 'content-type': 'application/json' }, payload });
    expect(res.statusCode, res.body).toBeLessThan(500);
    expect(await verifyAudit(t.ctx)).toMatchObject({ ok: true });
  });
});
