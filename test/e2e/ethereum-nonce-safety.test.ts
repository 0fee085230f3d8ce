// Ethereum nonces where money can be lost, on anvil through the RPC proxy (issue 24): a transaction never expires, so
// a transfer our node forgot is failed only once its nonce is used at final depth (a cancel on chain: a zero-value
// self-send on that nonce); "nonce too low" from one backend is an unknown outcome, never a reason to re-sign; a send
// refused for good under a payment waiting in manual review leaves no gap that stalls the payouts after it.
import { createPublicClient, http, parseAbi, type Address } from 'viem';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleDeadExecution } from '../../src/core/payments/execute/abandon.js';
import { reconcile } from '../../src/core/treasury/reconcile.js';
import { mineBlocks, setAutomine, startEthereumDevnet, type EthereumDevnet } from '../../src/devnet/ethereum.js';
import { EXECUTION_QUEUE, type ExecutionJob } from '../../src/jobs/queue.js';
import { treasuryNativeBalances } from '../../src/ledger/native-balances.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createPayment, createTestContext, KEY, type TestContext } from '../helpers/context.js';
import { jsonRpc } from '../helpers/devnet-process.js';
import { runCommand } from '../helpers/process.js';
import { startRpcProxy, type RpcProxy } from '../helpers/rpc-proxy.js';
import { confirm, drainExecution, executeAlone } from '../helpers/workers.js';

const RECIPIENT = '0x52908400098527886E0F7030069857D2E4169EE7' as Address;
const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)']);
const HASH_LOOKUPS = ['eth_getTransactionByHash', 'eth_getTransactionReceipt'];
const quiet = pino({ level: 'silent' });

let eth: EthereumDevnet;
let proxy: RpcProxy;
let t: TestContext;
let cliEnv: Record<string, string>;

beforeAll(async () => {
  eth = await startEthereumDevnet();
  proxy = await startRpcProxy(eth.rpcUrl);
  const chain = {
    ETHEREUM_ADAPTER: 'rpc',
    ETHEREUM_RPC_URL: proxy.url,
    ETHEREUM_USDC_ADDRESS: eth.usdcAddress,
    ETHEREUM_TREASURY_KEY: eth.treasuryKey,
    ETHEREUM_CONFIRMATIONS: '2',
    RPC_TIMEOUT_SECONDS: '5',
  };
  t = await createTestContext({ ...chain, STUCK_AFTER_SECONDS: '600', EXECUTION_RETRY_DELAY_SECONDS: '1' });
  cliEnv = { ...chain, DATABASE_URL: t.db.url };
}, 120_000);
afterAll(async () => {
  await t?.close();
  await proxy?.close();
  await eth?.stop();
});

const usdcReceived = () =>
  createPublicClient({ transport: http(eth.rpcUrl) }).readContract({ address: eth.usdcAddress, abi: ERC20, functionName: 'balanceOf', args: [RECIPIENT] });
const pay = (amountUsd: number, key: string) => createPayment(t.app, amountUsd, { ethereum_address: RECIPIENT }, key);
const read = async (id: string) => (await t.app.inject({ method: 'GET', url: `/admin/payments/${id}` })).json();
const resolve = (id: string, resolution: string) => t.app.inject({ method: 'POST', url: `/admin/payments/${id}/resolve`, payload: { resolution } });
const attemptsOf = async (id: string) =>
  (
    await t.db.pool.query<{ tx_id: string; signed_tx: string; status: string; nonce: string; purpose: string }>(
      `SELECT tx_id, signed_tx, status, chain_meta->>'nonce' AS nonce, to_jsonb(a)->>'purpose' AS purpose
         FROM payment_attempts a WHERE payment_intent_id = $1 ORDER BY created_at, id`,
      [id],
    )
  ).rows;

/** Runs the one queued execution job of `id` (its first attempt), as a worker would. */
async function executeOnce(id: string): Promise<void> {
  const jobs = await t.boss.fetch<ExecutionJob>(EXECUTION_QUEUE, { batchSize: 20, ignoreStartAfter: true });
  for (const job of jobs) {
    if (job.data.payment_intent_id === id) await executeAlone({ ...t.ctx, log: quiet }, job.data);
    await t.boss.complete(EXECUTION_QUEUE, job.id);
  }
}

/** Mines and runs confirmation rounds until every payment of `ids` is settled or failed, or a bound is reached. */
async function finish(...ids: string[]): Promise<string[]> {
  let statuses: string[] = [];
  for (let round = 0; round < 12; round++) {
    await mineBlocks(eth.rpcUrl, 1);
    await confirm(t);
    statuses = await Promise.all(ids.map(async (id) => (await read(id)).status as string));
    if (statuses.every((s) => s === 'settled' || s === 'failed')) break;
  }
  return statuses;
}

describe('ethereum nonces, money-safe', () => {
  it('"nonce too low" from a backend that took the transfer, hash lookups not found: unknown, settled once, never re-signed', async () => {
    const before = await usdcReceived();
    const id = await pay(3.5, 'nonce-too-low');
    // The send reaches the node (anvil mines it at once) but the caller is told "nonce too low", and a lagging
    // backend does not find the hash.
    proxy.errorMethods.set('eth_sendRawTransaction', { code: -32000, message: 'nonce too low', passOn: true });
    for (const method of HASH_LOOKUPS) proxy.nullMethods.add(method);
    try {
      await executeOnce(id);
    } finally {
      proxy.errorMethods.clear();
      proxy.nullMethods.clear();
    }
    expect((await read(id)).status).toBe('retrying');
    await drainExecution(t);
    expect(await finish(id)).toEqual(['settled']);
    expect((await usdcReceived()) - before).toBe(3_500_000n);
    expect((await attemptsOf(id)).map((a) => a.status)).toEqual(['confirmed']);
  });

  it('a send refused for good under a payment left in manual review: the next payout takes that nonce and is mined', async () => {
    const before = await usdcReceived();
    const stalled = await pay(1.25, 'refused-then-abandoned');
    proxy.errorMethods.set('eth_sendRawTransaction', { code: -32000, message: 'insufficient funds for gas * price + value', passOn: false });
    try {
      await executeOnce(stalled);
    } finally {
      proxy.errorMethods.clear();
    }
    expect((await read(stalled)).status).toBe('retrying');
    // The retry's job is the one the queue gives up on: the payment waits for an operator, its nonce refused.
    await handleDeadExecution({ ...t.ctx, log: quiet }, { payment_intent_id: stalled, attempt: 2 });
    expect((await read(stalled)).status).toBe('manual_review');
    const [refused] = await attemptsOf(stalled);

    const next = await pay(2.5, 'after-the-gap');
    await drainExecution(t);
    expect(await finish(next)).toEqual(['settled']);
    expect((await attemptsOf(next))[0]!.nonce).toBe(refused!.nonce);

    // The operator retries the stalled payment: it signs on a fresh nonce, never on the one the next payout used.
    expect((await resolve(stalled, 'retry')).statusCode).toBe(200);
    await drainExecution(t);
    expect(await finish(stalled)).toEqual(['settled']);
    expect((await usdcReceived()) - before).toBe(3_750_000n);
  });

  it('a transfer anvil dropped: failed refused, cancel on chain, failed once the cancel is final; the original bytes are refused', async () => {
    const before = await usdcReceived();
    await setAutomine(eth.rpcUrl, false);
    let byHand: string;
    let byRound: string;
    try {
      byHand = await pay(4, 'dropped-1');
      byRound = await pay(6, 'dropped-2');
      await drainExecution(t);
      for (const id of [byHand, byRound]) {
        expect((await read(id)).status).toBe('broadcasted');
        await jsonRpc(eth.rpcUrl, 'anvil_dropTransaction', [(await attemptsOf(id))[0]!.tx_id]);
      }
      t.clock.advance(601_000);
      await confirm(t);
      for (const id of [byHand, byRound]) {
        const payment = await read(id);
        expect(payment.status).toBe('manual_review');
        // Our node forgot the transfer, but some other node may still hold it and mine it: not failed.
        const refused = await resolve(id, 'failed');
        expect(refused.statusCode, refused.body).toBe(409);
        expect(refused.json().code).toBe('TRANSFER_MAY_STILL_LAND');
        expect(payment.actions.resolve).toContain('cancel_on_chain');
        // One through the admin API, the other through the CLI: the same use case.
        let cancelled: { payment_intent_id: string; status: string; tx_id: string };
        if (id === byHand) {
          const res = await resolve(id, 'cancel_on_chain');
          expect(res.statusCode, res.body).toBe(200);
          cancelled = res.json();
        } else {
          const run = await runCommand(['intents', 'resolve', id, '--cancel-on-chain', '--json'], cliEnv);
          expect(run.code, run.stderr).toBe(0);
          cancelled = JSON.parse(run.stdout.trim().split('\n').pop()!);
        }
        expect(cancelled).toMatchObject({ payment_intent_id: id, status: 'manual_review' });
        const [original, cancel] = await attemptsOf(id);
        expect(cancel).toMatchObject({ purpose: 'cancel', status: 'broadcasted', nonce: original!.nonce, tx_id: cancelled.tx_id });
        expect(original!.status).toBe('replaced');
        // The cancel is in the pool, not mined: the transfer could still be the one that lands.
        expect((await resolve(id, 'failed')).statusCode).toBe(409);
      }
      await mineBlocks(eth.rpcUrl, 2);
    } finally {
      await setAutomine(eth.rpcUrl, true);
    }
    // Final: the operator's failed is accepted for one; the confirmation round fails the other by itself.
    const accepted = await resolve(byHand!, 'failed');
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json().status).toBe('failed');
    expect(await finish(byRound!)).toEqual(['failed']);
    const reasons = await t.db.pool.query<{ reason: string }>(
      "SELECT reason FROM payment_intent_transitions WHERE payment_intent_id = $1 AND to_status = 'failed'",
      [byRound!],
    );
    expect(reasons.rows).toEqual([{ reason: 'cancelled_on_chain' }]);
    for (const id of [byHand!, byRound!]) {
      const payment = await read(id);
      expect(payment.ledger.map((t: { type: string }) => t.type)).toEqual(['reserve', 'debit', 'fee', 'release']);
      // The merchant sees a failed payment and its one transfer, never the cancel as a "confirmed" attempt.
      const merchant = (await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json();
      expect(merchant.status).toBe('failed');
      expect(merchant.attempts.map((a: { status: string }) => a.status)).toEqual(['replaced']);
      const [original, cancel] = await attemptsOf(id);
      expect(cancel!.status).toBe('confirmed');
      const resent = jsonRpc(eth.rpcUrl, 'eth_sendRawTransaction', [original!.signed_tx]);
      await expect(resent).rejects.toThrow(/nonce too low/i);
    }
    expect((await usdcReceived()) - before).toBe(0n);
    // The cancels' gas is booked as the chain charged it; a payout after them is paid as usual.
    const after = await pay(1, 'after-cancels');
    await drainExecution(t);
    expect(await finish(after)).toEqual(['settled']);
  });

  it('the books agree with the chain: reconcile and ledger verify are clean, booked gas equals the wallet', async () => {
    for (const row of await reconcile(t.db.pool, t.ctx.adapters)) expect(row.status, JSON.stringify(row)).toBe('ok');
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
    const booked = (await treasuryNativeBalances(t.db.pool)).find((b) => b.chain === 'ethereum')!.units;
    expect(booked).toBe(await t.ctx.adapters.ethereum!.treasuryNativeBalance());
  });
});
