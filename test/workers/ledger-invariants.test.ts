// Property: whatever sequence of creations, executions, time, confirmations and operator actions happens (with
// injected broadcast failures and stuck transfers), the ledger proves itself, no treasury goes negative, money is
// conserved per chain to the micro-unit, and no intent is ever paid twice.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveManualReview } from '../../src/core/operator.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createTestContext, ETH_ADDRESS, KEY, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { confirm, drainExecution } from '../helpers/workers.js';

const OPENING_MICROS = 500_000_000n;
let t: TestContext;
const settledByHand = new Set<string>();
let keys = 0;

beforeAll(async () => {
  t = await createTestContext({
    SIM_TREASURY_USDC: '500',
    SIM_FAILURE_RATE: '0.6',
    SIM_STUCK_RATE: '0.2',
    STUCK_AFTER_SECONDS: '60',
    SIM_CONFIRM_SECONDS: '20',
    SIM_SEED: 'ledger-properties',
  });
});
afterAll(async () => t.close());

type Command =
  | { kind: 'pay'; micros: number; chain: 'ethereum' | 'solana'; reuseKey: boolean }
  | { kind: 'execute' }
  | { kind: 'advance'; seconds: number }
  | { kind: 'confirm' }
  | { kind: 'resolve'; pick: number; how: 'failed' | 'settled' };

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    kind: fc.constant('pay' as const),
    micros: fc.integer({ min: 1, max: 120_000_000 }),
    chain: fc.constantFrom('ethereum' as const, 'solana' as const),
    reuseKey: fc.boolean(),
  }),
  fc.constant({ kind: 'execute' as const }),
  // Short steps land between inclusion and finality; long ones past the stuck threshold.
  fc.record({ kind: fc.constant('advance' as const), seconds: fc.oneof(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 120 })) }),
  fc.constant({ kind: 'confirm' as const }),
  fc.record({ kind: fc.constant('resolve' as const), pick: fc.nat(), how: fc.constantFrom('failed' as const, 'settled' as const) }),
);

async function run(c: Command): Promise<void> {
  switch (c.kind) {
    case 'pay': {
      const destination = c.chain === 'ethereum' ? { ethereum_address: ETH_ADDRESS } : { solana_address: SOL_ADDRESS };
      const quote = await t.app.inject({
        method: 'POST',
        url: '/quotes',
        headers: KEY,
        payload: { amount_usd: c.micros / 1e6, destination, priority: 'fast' },
      });
      expect([201, 400]).toContain(quote.statusCode);
      if (quote.statusCode !== 201) {
        expect(quote.json().code).toBe('INSUFFICIENT_BALANCE');
        return;
      }
      const key = c.reuseKey && keys > 0 ? `p-${keys}` : `p-${++keys}`;
      const res = await t.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { quote_id: quote.json().quote_id, idempotency_key: key } });
      expect([201, 400, 409], res.body).toContain(res.statusCode);
      return;
    }
    case 'execute':
      await drainExecution(t);
      return;
    case 'advance':
      t.clock.advance(c.seconds * 1000);
      return;
    case 'confirm':
      await confirm(t);
      return;
    case 'resolve': {
      const { rows } = await t.db.pool.query<{ id: string }>("SELECT id FROM payment_intents WHERE status = 'manual_review' ORDER BY id");
      if (rows.length === 0) return;
      const id = rows[c.pick % rows.length]!.id;
      await resolveManualReview(t.ctx, id, c.how);
      if (c.how === 'settled') settledByHand.add(id);
    }
  }
}

async function checkInvariants(): Promise<void> {
  const report = await verifyLedger(t.db.pool);
  expect(report.problems).toEqual([]);

  // Conservation per chain, in micro-units: what the treasury holds plus what left it is what it opened with.
  const { rows: accounts } = await t.db.pool.query<{ chain: string; kind: string; balance: string }>(
    "SELECT chain, kind, balance::text FROM ledger_accounts WHERE currency = 'USDC'",
  );
  for (const chain of ['ethereum', 'solana']) {
    const of = (kind: string) => BigInt(accounts.find((a) => a.chain === chain && a.kind === kind)?.balance ?? '0');
    for (const kind of ['treasury_available', 'treasury_reserved', 'treasury_in_flight']) expect(of(kind) >= 0n).toBe(true);
    expect(of('treasury_available') + of('treasury_reserved') + of('treasury_in_flight') + of('payouts')).toBe(OPENING_MICROS);
    expect(-of('funding')).toBe(OPENING_MICROS);
    // What open intents hold is exactly what is reserved or in flight.
    const open = await t.db.pool.query<{ total: string }>(
      "SELECT COALESCE(SUM(amount_micros), 0)::text AS total FROM payment_intents WHERE selected_chain = $1 AND status NOT IN ('settled', 'failed', 'cancelled', 'expired')",
      [chain],
    );
    expect(of('treasury_reserved') + of('treasury_in_flight')).toBe(BigInt(open.rows[0]!.total));
    const settled = await t.db.pool.query<{ total: string }>(
      "SELECT COALESCE(SUM(amount_micros), 0)::text AS total FROM payment_intents WHERE selected_chain = $1 AND status = 'settled'",
      [chain],
    );
    expect(of('payouts')).toBe(BigInt(settled.rows[0]!.total));
  }

  // Never paid twice: at most one transfer reached the (simulated) chain per intent; a settled intent's transfer
  // landed unless an operator settled it by hand after an outside check; a failed intent's never did.
  const { rows: transfers } = await t.db.pool.query<{ ref: string; n: number }>(
    "SELECT raw_tx::jsonb->>'ref' AS ref, COUNT(*)::int AS n FROM sim_transactions WHERE NOT will_stick GROUP BY 1",
  );
  for (const row of transfers) expect(row.n, row.ref).toBe(1);
  const landed = new Set(transfers.map((r) => r.ref));
  const { rows: intents } = await t.db.pool.query<{ id: string; status: string }>('SELECT id, status FROM payment_intents');
  for (const intent of intents) {
    if (intent.status === 'settled' && !settledByHand.has(intent.id)) expect(landed.has(intent.id), intent.id).toBe(true);
    if (intent.status === 'failed' || intent.status === 'cancelled') expect(landed.has(intent.id), intent.id).toBe(false);
  }
}

describe('ledger invariants', () => {
  it('hold after any sequence of operations', { timeout: 240_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 40 }), async (commands) => {
        for (const c of commands) await run(c);
        await checkInvariants();
      }),
      { numRuns: 100, verbose: 1 },
    );
    // The runs reached every outcome, so the invariants were checked against each of them.
    const { rows } = await t.db.pool.query<{ status: string }>('SELECT DISTINCT to_status AS status FROM payment_intent_transitions');
    expect(rows.map((r) => r.status)).toEqual(
      expect.arrayContaining(['retrying', 'pending_confirmation', 'settled', 'failed', 'manual_review']),
    );
  });
});
