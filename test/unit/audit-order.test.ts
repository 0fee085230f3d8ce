// The audit log's order past nine records (decision 102): pages newest first by sequence number as a number, and the
// proof walks the records in that order. Sequence numbers leave the database as text; sorted as text, 10 would come
// before 2, the log's newest records would sit in the middle of a page, and `audit verify` would report record 2
// missing from a log that is intact.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendAudit, auditRecords } from '../../src/core/operators/audit.js';
import { verifyAudit } from '../../src/core/operators/audit-verify.js';
import { withTransaction } from '../../src/db/pool.js';
import { TEST_AUDIT_CONFIG, testAudit } from '../helpers/audit.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const RECORDS = 12;
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  const start = Date.parse('2026-01-01T00:00:00.000Z');
  for (let n = 1; n <= RECORDS; n++) {
    await withTransaction(db.pool, (tx) => appendAudit(TEST_AUDIT_CONFIG, tx, { ...testAudit(`test.record_${n}`), targets: [`t_${n}`] }, 'ok', new Date(start + n * 1000)));
  }
});
afterAll(async () => db?.drop());

describe('the audit log past nine records', () => {
  it('pages newest first by sequence number, and the cursor continues where the page ended', async () => {
    const first = await auditRecords(db.pool, { limit: 5 });
    expect(first.map((r) => r.seq)).toEqual(['12', '11', '10', '9', '8']);
    const next = await auditRecords(db.pool, { limit: 5, before: BigInt(first.at(-1)!.seq) });
    expect(next.map((r) => r.seq)).toEqual(['7', '6', '5', '4', '3']);
  });

  it('proves an intact log intact', async () => {
    expect(await verifyAudit({ pool: db.pool, config: TEST_AUDIT_CONFIG })).toMatchObject({ ok: true, records: RECORDS });
  });
});
