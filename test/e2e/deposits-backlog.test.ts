// The Solana deposit scan after a long outage (decision 124): 25,000 finalized transactions of the treasury arrive
// between two scans on the LiteSVM devnet (deposits of USDC, of SOL and of both, a returned payout, payouts of our own
// in the middle). Scanning again books every inbound transfer once, the return as its payment's one refund; every scan
// lists a bounded number of pages, reads a bounded number of transactions, holds a position of bounded size and moves
// it; the SOL top-ups in the backlog put Solana back among the routes that routing had dropped for insufficient_gas.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSolanaSecretKey } from '../../src/chains/solana/keys.js';
import { scanChain } from '../../src/core/treasury/deposits/scan.js';
import { reconcile } from '../../src/core/treasury/reconcile.js';
import { readDepositPosition } from '../../src/db/queries/deposits.js';
import { startSolanaDevnet, type SolanaDevnet } from '../../src/devnet/solana.js';
import { sendDevnetSolanaTransfers, type DevnetSolanaTransfer } from '../../src/devnet/solana-transfer.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createPayment, createTestContext, KEY, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { confirm, drainExecution } from '../helpers/workers.js';

const quiet = pino({ level: 'silent' });
const FINALIZE_AFTER_SLOTS = 8;
const BACKLOG_TRANSACTIONS = 25_000;
/** Transactions per slot, in one stableroute_transfer call: 20 USDC deposits, 20 SOL top-ups, 10 of both. */
const PER_SLOT = { usdc: 20, sol: 20, both: 10 };
const SLOT_TRANSACTIONS = PER_SLOT.usdc + PER_SLOT.sol + PER_SLOT.both;
const USDC_MICROS = 10_000n; // 0.01 USDC each
const TOP_UP_LAMPORTS = 100_000n; // 0.0001 SOL each: 30 per slot, 15,000 in all = 1.5 SOL
// The bounds of src/chains/solana/inbound.ts, as the node sees them.
const SIGNATURE_PAGES_PER_SCAN_PER_ADDRESS = 10;
const TRANSACTIONS_PER_SCAN = 200;
const POSITION_CHARS_MAX = 2 * 100 * 90 + 400;

let sol: SolanaDevnet;
let t: TestContext;
/** JSON-RPC calls the devnet answered, by method (its request log). */
const calls = new Map<string, number>();

beforeAll(async () => {
  const counter = {
    info: () => undefined,
    error: () => undefined,
    debug: (fields: { method?: string }) => {
      if (fields.method) calls.set(fields.method, (calls.get(fields.method) ?? 0) + 1);
    },
  };
  sol = await startSolanaDevnet({
    slotMs: 50,
    finalizeAfterSlots: FINALIZE_AFTER_SLOTS,
    historyMax: 2 * BACKLOG_TRANSACTIONS,
    treasuryLamports: 500_000_000n, // 0.5 SOL
    logger: counter,
  });
  sol.pause();
  t = await createTestContext({
    SOLANA_ADAPTER: 'rpc',
    SOLANA_RPC_URL: sol.rpcUrl,
    SOLANA_USDC_MINT: sol.usdcMint,
    SOLANA_TREASURY_KEY: sol.treasuryKey,
    SOL_USD_PRICE: '150',
  });
}, 120_000);
afterAll(async () => {
  await t?.close();
  await sol?.stop();
});

async function settle(id: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    sol.advanceSlots(4);
    await confirm(t);
    const { rows } = await t.db.pool.query('SELECT status FROM payment_intents WHERE id = $1', [id]);
    if (rows[0].status === 'settled') return;
  }
  throw new Error(`${id} did not settle`);
}

async function payout(amountUsd: number, to: string): Promise<string> {
  const id = await createPayment(t.app, amountUsd, { solana_address: to });
  await drainExecution(t);
  await settle(id);
  return id;
}

async function booked(kind: 'treasury_available' | 'treasury_native'): Promise<bigint> {
  const { rows } = await t.db.pool.query("SELECT COALESCE(SUM(balance), 0)::text AS balance FROM ledger_accounts WHERE chain = 'solana' AND kind = $1", [kind]);
  return BigInt(rows[0].balance);
}

async function solanaQuote(): Promise<{ status: number; body: string }> {
  const quote = await t.app.inject({ method: 'POST', url: '/quotes', headers: KEY, payload: { amount_usd: 1, destination: { solana_address: SOL_ADDRESS }, priority: 'fast' } });
  return { status: quote.statusCode, body: quote.body };
}

/** The backlog's deposits, `slots` slots of SLOT_TRANSACTIONS each; returns their signatures by kind. */
async function deposits(slots: number, senders: { usdc: string; sol: string; both: string }): Promise<Record<'usdc' | 'sol' | 'both', string[]>> {
  const sent = { usdc: [] as string[], sol: [] as string[], both: [] as string[] };
  const treasury = sol.treasuryAddress;
  for (let slot = 0; slot < slots; slot++) {
    const transfers: DevnetSolanaTransfer[] = [
      { from: senders.usdc, to: treasury, usdcMicros: USDC_MICROS, lamports: 0n, repeat: PER_SLOT.usdc },
      { from: senders.sol, to: treasury, usdcMicros: 0n, lamports: TOP_UP_LAMPORTS, repeat: PER_SLOT.sol },
      { from: senders.both, to: treasury, usdcMicros: USDC_MICROS, lamports: TOP_UP_LAMPORTS, repeat: PER_SLOT.both },
    ];
    const { signatures } = await sendDevnetSolanaTransfers(sol.rpcUrl, transfers);
    sent.usdc.push(...signatures.slice(0, PER_SLOT.usdc));
    sent.sol.push(...signatures.slice(PER_SLOT.usdc, PER_SLOT.usdc + PER_SLOT.sol));
    sent.both.push(...signatures.slice(PER_SLOT.usdc + PER_SLOT.sol));
    sol.advanceSlots(1);
  }
  return sent;
}

describe('a Solana deposit backlog of 25,000 signatures', () => {
  it('books every transfer once, a bounded page per scan, the position moving every scan', { timeout: 600_000 }, async () => {
    // Before the outage: a settled payout (its recipient sends it back later), and the scan at the tip.
    const returned = await payout(5, SOL_ADDRESS);
    while ((await scanChain({ ...t.ctx, log: quiet }, 'solana', {})).more);
    const availableBefore = await booked('treasury_available');
    const nativeBefore = await booked('treasury_native');

    // The outage: deposits, the return, and two payouts of our own (the treasury's wallet and token account both
    // sign or change in them, as in every payout) in the middle of it.
    const senders = { usdc: generateSolanaSecretKey().address, sol: generateSolanaSecretKey().address, both: generateSolanaSecretKey().address };
    for (const sender of Object.values(senders)) await sol.fund(sender, { usdcMicros: 1_000_000_000n, lamports: 0n });
    const slots = Math.ceil(BACKLOG_TRANSACTIONS / SLOT_TRANSACTIONS);
    const first = await deposits(Math.floor(slots / 2), senders);
    const [returnTx] = (await sendDevnetSolanaTransfers(sol.rpcUrl, [{ from: SOL_ADDRESS, to: sol.treasuryAddress, usdcMicros: 5_000_000n, lamports: 0n }])).signatures;
    const paidDuring = [await payout(2, generateSolanaSecretKey().address), await payout(3, generateSolanaSecretKey().address)];
    const second = await deposits(slots - Math.floor(slots / 2), senders);
    sol.advanceSlots(FINALIZE_AFTER_SLOTS);
    const sent = { usdc: [...first.usdc, ...second.usdc], sol: [...first.sol, ...second.sol], both: [...first.both, ...second.both] };
    const transactions = sent.usdc.length + sent.sol.length + sent.both.length + 1 + paidDuring.length;
    expect(transactions).toBeGreaterThanOrEqual(BACKLOG_TRANSACTIONS);

    // Fees booked, top-ups not yet: at a fee of 1 SOL (0.5 SOL at start), routing drops Solana.
    const health = await t.app.inject({ method: 'POST', url: '/admin/chain-health', payload: { chain: 'solana', health_status: 'healthy', estimated_fee_usd: 150 } });
    expect(health.statusCode).toBeLessThan(300);
    const refused = await solanaQuote();
    expect(refused.status).toBe(422);
    expect(refused.body).toContain('insufficient_gas');

    // Scan until nothing is left, as the worker does while a scan says `more`.
    let scans = 0;
    let position = (await readDepositPosition(t.db.pool, 'solana'))!;
    for (let more = true; more; ) {
      calls.clear();
      const result = await scanChain({ ...t.ctx, log: quiet }, 'solana', {});
      more = result.more;
      scans += 1;
      const moved = (await readDepositPosition(t.db.pool, 'solana'))!;
      if (more) expect(moved, `scan ${scans} did not move the position`).not.toBe(position);
      position = moved;
      expect(position.length).toBeLessThanOrEqual(POSITION_CHARS_MAX);
      expect(calls.get('getSignaturesForAddress') ?? 0).toBeLessThanOrEqual(2 * SIGNATURE_PAGES_PER_SCAN_PER_ADDRESS);
      expect(calls.get('getTransaction') ?? 0).toBeLessThanOrEqual(TRANSACTIONS_PER_SCAN);
      expect(result.booked).toBeLessThanOrEqual(2 * TRANSACTIONS_PER_SCAN);
      expect(scans, 'the scan does not end').toBeLessThan(3 * (transactions / TRANSACTIONS_PER_SCAN));
    }

    // Every transfer once: USDC from the USDC and "both" deposits, SOL from the SOL and "both" ones, and the return.
    const { rows } = await t.db.pool.query<{ tx_id: string; currency: string; match_status: string; payment_intent_id: string | null }>(
      "SELECT tx_id, currency, match_status, payment_intent_id FROM inbound_transfers WHERE chain = 'solana'",
    );
    const ids = (currency: string) => rows.filter((r) => r.currency === currency).map((r) => r.tx_id).sort();
    expect(ids('USDC')).toEqual([...sent.usdc, ...sent.both, returnTx!].sort());
    expect(ids('SOL')).toEqual([...sent.sol, ...sent.both].sort());
    expect(rows.filter((r) => r.match_status === 'matched')).toEqual([{ tx_id: returnTx, currency: 'USDC', match_status: 'matched', payment_intent_id: returned }]);
    const usdcIn = BigInt(sent.usdc.length + sent.both.length) * USDC_MICROS;
    const paidOut = 2_000_000n + 3_000_000n;
    expect(await booked('treasury_available')).toBe(availableBefore + usdcIn + 5_000_000n - paidOut);
    expect(await booked('treasury_native')).toBeGreaterThan(nativeBefore + BigInt(sent.sol.length + sent.both.length) * TOP_UP_LAMPORTS - 10_000_000n);

    // The top-ups booked, Solana routes again; the books and the chain agree.
    const quote = await solanaQuote();
    expect(quote.status, quote.body).toBe(201);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
    for (const r of await reconcile(t.db.pool, t.ctx.adapters)) expect(r.status, JSON.stringify(r)).toBe('ok');
  });
});
