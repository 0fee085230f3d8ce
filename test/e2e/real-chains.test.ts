// stableroute against local real chains: anvil (Ethereum) and the LiteSVM JSON-RPC devnet (Solana), through the
// same workers as production. Transfers are checked on chain to the micro-unit.
import { createPublicClient, createWalletClient, erc20Abi, getAddress, http, maxUint256, parseAbi, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { blacklistEthereumAddress } from '../../src/devnet/ethereum-blacklist.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSolanaSecretKey } from '../../src/chains/solana/keys.js';
import { executeBatch } from '../../src/core/payments/execute/execute.js';
import { runOf } from '../../src/core/payments/execute/run.js';
import { resolveManualReview } from '../../src/core/operators/transitions/resolve.js';
import { createOperator } from '../../src/core/operators/operators.js';
import { reconcile } from '../../src/core/treasury/reconcile.js';
import { mineBlocks, setAutomine, startEthereumDevnet, type EthereumDevnet } from '../../src/devnet/ethereum.js';
import { startSolanaDevnet, type SolanaDevnet } from '../../src/devnet/solana.js';
import { EXECUTION_QUEUE, type ExecutionJob } from '../../src/jobs/queue.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { recordHealthSnapshots } from '../../src/core/health/health-snapshots.js';
import { createTestContext, KEY, type TestContext } from '../helpers/context.js';
import { startRpcProxy, type RpcProxy } from '../helpers/rpc-proxy.js';
import { confirm, drainExecution, executeAlone } from '../helpers/workers.js';
import pino from 'pino';
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { devnetEnv } from '../helpers/devnet.js';
import { testAudit } from '../helpers/audit.js';

const ETH_RECIPIENT = '0x52908400098527886E0F7030069857D2E4169EE7' as Address;
const SOL_RECIPIENT = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)']);

let eth: EthereumDevnet;
let sol: SolanaDevnet;
let proxy: RpcProxy;
let t: TestContext;
/** The screening list: one address nobody here pays, until a test lists a recipient. */
const listFile = join(mkdtempSync(join(tmpdir(), 'stableroute-real-screening-')), 'sanctioned.txt');

beforeAll(async () => {
  writeFileSync(listFile, `# placeholder\n0x${'dead'.repeat(10)}\n`);
  [eth, sol] = await Promise.all([startEthereumDevnet(), startSolanaDevnet({ slotMs: 50, finalizeAfterSlots: 8 })]);
  // The treasury approves the batch contract once, as an operator does before setting ETHEREUM_BATCH_CONTRACT.
  const treasury = createWalletClient({ account: privateKeyToAccount(eth.treasuryKey), transport: http(eth.rpcUrl) });
  const approval = await treasury.writeContract({ address: eth.usdcAddress, abi: erc20Abi, functionName: 'approve', args: [eth.batchContractAddress, maxUint256], chain: null });
  await createPublicClient({ transport: http(eth.rpcUrl) }).waitForTransactionReceipt({ hash: approval, pollingInterval: 50 });
  proxy = await startRpcProxy(eth.rpcUrl);
  t = await createTestContext({
    ...devnetEnv(eth, sol, { ETHEREUM_RPC_URL: proxy.url, ETHEREUM_BATCH_CONTRACT: eth.batchContractAddress }),
    RPC_TIMEOUT_SECONDS: '1',
    SCREENING_LIST_FILE: listFile,
    STUCK_AFTER_SECONDS: '600',
    EXECUTION_RETRY_DELAY_SECONDS: '1',
  });
}, 120_000);
afterAll(async () => {
  await t?.close();
  await proxy?.close();
  await Promise.all([eth?.stop(), sol?.stop()]);
});

async function pay(amount: number, destination: object, key: string): Promise<string> {
  const quote = await t.app.inject({ method: 'POST', url: '/quotes', headers: KEY, payload: { amount_usd: amount, destination, priority: 'fast' } });
  expect(quote.statusCode, quote.body).toBe(201);
  const res = await t.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { quote_id: quote.json().quote_id, idempotency_key: key } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().payment_intent_id;
}

/**
 * One poll of the execution worker, by hand: the queued jobs (`expected` of them) fetched and run as one execution
 * batch, with `adapters` in place of the context's where given; every run completes its job.
 */
async function executeOnePoll(expected: number, adapters: TestContext['ctx']['adapters'] = t.ctx.adapters): Promise<void> {
  const jobs = await t.boss.fetch<ExecutionJob>(EXECUTION_QUEUE, { batchSize: 16 });
  expect(jobs).toHaveLength(expected);
  const outcomes = await executeBatch({ ...t.ctx, adapters, log: pino({ level: 'silent' }) }, jobs.map((job) => runOf(job.data)));
  for (const [k, outcome] of outcomes.entries()) {
    expect(outcome.ok).toBe(true);
    await t.boss.complete(EXECUTION_QUEUE, jobs[k]!.id);
  }
}

const read = async (id: string): Promise<IntentView> => (await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json();
const ethBalance = () =>
  createPublicClient({ transport: http(eth.rpcUrl) }).readContract({ address: eth.usdcAddress, abi: ERC20, functionName: 'balanceOf', args: [ETH_RECIPIENT] });

interface SolanaTransaction {
  meta: { err: unknown; fee: number; preBalances: number[]; postBalances: number[]; postTokenBalances: { owner: string; uiTokenAmount: { amount: string } }[] };
}

async function solRpc(method: string, params: unknown[]): Promise<SolanaTransaction> {
  const res = await fetch(sol.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return ((await res.json()) as { result: SolanaTransaction }).result;
}

type IntentView = {
  status: string;
  attempts: { tx_id: string; status: string; actual_fee_native: number }[];
  ledger_entries: { type: string; amount: number; currency: string }[];
};

/** Runs the confirmation worker until `id` is settled, moving the chains on between polls. */
async function settle(id: string, moveChain: () => Promise<void> | void): Promise<IntentView> {
  for (let i = 0; i < 50; i++) {
    await moveChain();
    await confirm(t);
    const intent = await read(id);
    if (intent.status === 'settled' || intent.status === 'failed') return intent;
  }
  throw new Error(`${id} did not settle`);
}

describe('real chains', () => {
  it('Solana: quote -> intent -> settled; the transfer is on chain to the micro-unit', async () => {
    const id = await pay(12.345678, { solana_address: SOL_RECIPIENT }, 'sol-1');
    await drainExecution(t);
    const intent = await settle(id, () => sol.advanceSlots(4));
    expect(intent.status).toBe('settled');
    const signature = intent.attempts[0]!.tx_id;
    const tx = await solRpc('getTransaction', [signature, { encoding: 'json', commitment: 'finalized', maxSupportedTransactionVersion: 0 }]);
    expect(tx.meta.err).toBeNull();
    const post = tx.meta.postTokenBalances.find((b) => b.owner === SOL_RECIPIENT);
    expect(post?.uiTokenAmount.amount).toBe('12345678');
    expect(intent.ledger_entries.map((e: { type: string }) => e.type)).toEqual(['reserve', 'debit', 'fee']);
    expect(intent.ledger_entries[2]!.currency).toBe('SOL');
    expect(intent.ledger_entries[2]!.amount).toBeGreaterThanOrEqual(tx.meta.fee / 1e9);
  });

  it('Solana: the payouts of one execution batch go out in one transaction; each recipient paid exactly, the cost shared', async () => {
    const recipients = Array.from({ length: 5 }, () => generateSolanaSecretKey().address);
    const ids: string[] = [];
    for (const [i, to] of recipients.entries()) ids.push(await pay(2 + i / 100, { solana_address: to }, `sol-batch-${i}`));
    // One poll of the execution worker: the five prepared together.
    await executeOnePoll(5);
    for (const id of ids) expect((await settle(id, () => sol.advanceSlots(4))).status).toBe('settled');

    const { rows } = await t.db.pool.query<{ tx_id: string; tx_payments: number; fee: string }>(
      'SELECT tx_id, tx_payments, actual_fee_native::text AS fee FROM payment_attempts WHERE payment_intent_id = ANY($1)',
      [ids],
    );
    expect(new Set(rows.map((r) => r.tx_id)).size).toBe(1);
    expect(rows.map((r) => r.tx_payments)).toEqual([5, 5, 5, 5, 5]);
    const tx = await solRpc('getTransaction', [rows[0]!.tx_id, { encoding: 'json', commitment: 'finalized', maxSupportedTransactionVersion: 0 }]);
    expect(tx.meta.err).toBeNull();
    for (const [i, to] of recipients.entries()) {
      expect(tx.meta.postTokenBalances.find((b) => b.owner === to)?.uiTokenAmount.amount).toBe(String(2_000_000 + i * 10_000));
    }
    // The treasury's cost (one fee, five new token accounts' rent) booked in shares that add up to it exactly.
    const spent = BigInt(tx.meta.preBalances[0]! - tx.meta.postBalances[0]!);
    expect(rows.reduce((sum, r) => sum + BigInt(r.fee), 0n)).toBe(spent);
  });

  it('Solana: a batch the node refuses because one recipient\'s token account is frozen is split; that payout fails alone', async () => {
    const recipients = Array.from({ length: 3 }, () => generateSolanaSecretKey().address);
    const frozen = recipients[1]!;
    await sol.freeze(frozen); // as USDC's freeze authority does: its token account exists and takes nothing
    const ids: string[] = [];
    for (const [i, to] of recipients.entries()) ids.push(await pay(3 + i / 100, { solana_address: to }, `sol-frozen-${i}`));
    await executeOnePoll(3);
    // The three were prepared into one transaction, and the node's preflight refuses it. That proves nothing while its
    // blockhash is valid (an earlier copy could land), so the bytes stay live and are sent again until they expire;
    // then the confirmation worker sees a batch that can never land, and splits it.
    await drainExecution(t, 1000, { together: true });
    sol.advanceSlots(400);
    await confirm(t);
    const attempts = async () =>
      (
        await t.db.pool.query<{ payment_intent_id: string; tx_id: string; status: string; tx_payments: number }>(
          'SELECT payment_intent_id, tx_id, status, tx_payments FROM payment_attempts WHERE payment_intent_id = ANY($1) ORDER BY created_at',
          [ids],
        )
      ).rows;
    expect((await attempts()).map((a) => [a.status, a.tx_payments])).toEqual([['failed', 3], ['failed', 3], ['failed', 3]]);
    for (const id of ids) expect((await read(id)).status).toBe('retrying');

    await drainExecution(t, 1000, { together: true });
    // The frozen one alone is refused the same way, and fails once its own bytes have expired.
    sol.advanceSlots(400);
    await confirm(t);
    for (const i of [0, 2]) expect((await settle(ids[i]!, () => sol.advanceSlots(4))).status).toBe('settled');
    expect((await read(ids[1]!)).status).toBe('failed');
    const settled = (await attempts()).filter((a) => a.status === 'confirmed');
    expect(settled.map((a) => [a.payment_intent_id, a.tx_payments]).sort()).toEqual([ids[0], ids[2]].map((id) => [id, 1]).sort());
    for (const [i, attempt] of [ids[0], ids[2]].map((id) => settled.find((a) => a.payment_intent_id === id)!).entries()) {
      const tx = await solRpc('getTransaction', [attempt.tx_id, { encoding: 'json', commitment: 'finalized', maxSupportedTransactionVersion: 0 }]);
      expect(tx.meta.postTokenBalances.find((b) => b.owner === recipients[i * 2])?.uiTokenAmount.amount).toBe(String(3_000_000 + i * 2 * 10_000));
    }
  });

  it('Ethereum: 10 concurrent payouts, no nonce collision, every transfer on chain', async () => {
    const before = await ethBalance();
    const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => pay(1 + i / 100, { ethereum_address: ETH_RECIPIENT }, `eth-${i}`)));
    // Run the ten jobs concurrently, as several workers would.
    const jobs = await t.boss.fetch<{ payment_intent_id: string; attempt: number }>('payment-execute', { batchSize: 20, ignoreStartAfter: true });
    await Promise.all(jobs.map((job) => executeAlone({ ...t.ctx, log: pino({ level: 'silent' }) }, job.data)));
    for (const job of jobs) await t.boss.complete('payment-execute', job.id);
    // A run whose node read timed out on a busy machine (RPC_TIMEOUT_SECONDS is 1 here) queued its retry: run it too.
    await drainExecution(t);
    const nonces = await t.db.pool.query("SELECT chain_meta->>'nonce' AS nonce FROM payment_attempts WHERE chain = 'ethereum'");
    expect(new Set(nonces.rows.map((r) => r.nonce)).size).toBe(nonces.rows.length);
    for (const id of ids) expect((await settle(id, () => mineBlocks(eth.rpcUrl, 1))).status).toBe('settled');
    const expected = ids.reduce((sum, _, i) => sum + 1_000_000n + BigInt(i) * 10_000n, 0n);
    expect((await ethBalance()) - before).toBe(expected);
    const intent = await read(ids[0]!);
    expect(intent.attempts[0]!.actual_fee_native).toBeGreaterThan(0);
  });

  it('Ethereum: mining paused -> manual_review; a fee-bumped replacement settles it, paid once', async () => {
    const before = await ethBalance();
    await setAutomine(eth.rpcUrl, false);
    try {
      const id = await pay(5, { ethereum_address: ETH_RECIPIENT }, 'stuck-1');
      await drainExecution(t);
      expect((await read(id)).status).toBe('broadcasted');
      t.clock.advance(601_000);
      await confirm(t);
      expect((await read(id)).status).toBe('manual_review');
      const replaced = await resolveManualReview(t.ctx, id, 'replace', { audit: testAudit() });
      expect(replaced.status).toBe('broadcasted');
    } finally {
      await setAutomine(eth.rpcUrl, true);
    }
    await mineBlocks(eth.rpcUrl, 1);
    const id = (await t.db.pool.query("SELECT id FROM payment_intents WHERE idempotency_key = 'stuck-1'")).rows[0].id;
    const intent = await settle(id, () => mineBlocks(eth.rpcUrl, 1));
    expect(intent.status).toBe('settled');
    expect(intent.attempts.map((a: { status: string }) => a.status).sort()).toEqual(['confirmed', 'replaced']);
    expect((await ethBalance()) - before).toBe(5_000_000n);
  });

  it('Ethereum RPC down: rpc_timeout, retrying, then recovery once the node answers', async () => {
    proxy.down = true;
    let id: string;
    try {
      id = await pay(2, { ethereum_address: ETH_RECIPIENT }, 'down-1');
      const [job] = await t.boss.fetch<{ payment_intent_id: string; attempt: number }>('payment-execute', { ignoreStartAfter: true });
      await executeAlone({ ...t.ctx, log: pino({ level: 'silent' }) }, job!.data);
      await t.boss.complete('payment-execute', job!.id);
      const intent = await read(id);
      expect(intent.status).toBe('retrying');
      const reasons = await t.db.pool.query("SELECT reason FROM payment_intent_transitions WHERE payment_intent_id = $1 AND to_status = 'retrying'", [id]);
      expect(reasons.rows[0].reason).toBe('rpc_timeout');
      const probe = await t.ctx.adapters.ethereum!.probe();
      expect(probe.ok).toBe(false);
    } finally {
      proxy.down = false;
    }
    await drainExecution(t);
    expect((await settle(id!, () => mineBlocks(eth.rpcUrl, 1))).status).toBe('settled');
    await recordHealthSnapshots({ ...t.ctx, log: pino({ level: 'silent' }) });
  });

  it('Ethereum: one execution batch goes out in one transaction through the batch contract; a blacklisted recipient fails alone', async () => {
    const recipients = Array.from({ length: 4 }, () => privateKeyToAccount(generatePrivateKey()).address);
    const frozen = privateKeyToAccount(generatePrivateKey()).address;
    await blacklistEthereumAddress({ rpcUrl: eth.rpcUrl, usdcAddress: eth.usdcAddress }, frozen);
    const ids: string[] = [];
    for (const [i, to] of recipients.entries()) ids.push(await pay(3 + i / 100, { ethereum_address: to }, `eth-batch-${i}`));
    const refused = await pay(4, { ethereum_address: frozen }, 'eth-batch-frozen');
    // One poll of the execution worker: the five prepared together; the frozen one is refused alone and retried.
    await executeOnePoll(5);
    await drainExecution(t);
    // One of them stuck in review (as the stuck timer would leave it): its transaction pays the others too, so no
    // cancel on chain is made for it alone; the chain still settles it.
    await t.db.pool.query("UPDATE payment_intents SET status = 'manual_review' WHERE id = $1", [ids[0]]);
    const refusal = await resolveManualReview(t.ctx, ids[0]!, 'cancel_on_chain', { audit: testAudit() }).then(() => null, (error: unknown) => error);
    expect(refusal).toMatchObject({ code: 'INVALID_STATE', message: expect.stringMatching(/pays 4 payments in one on-chain batch; it cannot be cancelled/) });
    for (const id of ids) expect((await settle(id, () => mineBlocks(eth.rpcUrl, 1))).status).toBe('settled');
    expect((await read(refused)).status).toBe('failed');
    const { rows: failed } = await t.db.pool.query("SELECT payload FROM webhook_events WHERE event_type = 'payment.failed' AND payment_intent_id = $1", [refused]);
    expect(failed.map((e) => e.payload.failure_reason)).toEqual(['reverted']);

    const { rows } = await t.db.pool.query<{ tx_id: string; tx_payments: number; fee: string }>(
      'SELECT tx_id, tx_payments, actual_fee_native::text AS fee FROM payment_attempts WHERE payment_intent_id = ANY($1)',
      [ids],
    );
    expect(new Set(rows.map((r) => r.tx_id)).size).toBe(1);
    expect(rows.map((r) => r.tx_payments)).toEqual([4, 4, 4, 4]);
    const client = createPublicClient({ transport: http(eth.rpcUrl) });
    const receipt = await client.getTransactionReceipt({ hash: rows[0]!.tx_id as `0x${string}` });
    expect(getAddress(receipt.to!)).toBe(getAddress(eth.batchContractAddress));
    // The transaction's fee, booked in shares that add up to it exactly.
    expect(rows.reduce((sum, r) => sum + BigInt(r.fee), 0n)).toBe(receipt.gasUsed * receipt.effectiveGasPrice);
    const balance = (owner: Address) => client.readContract({ address: eth.usdcAddress, abi: ERC20, functionName: 'balanceOf', args: [owner] });
    for (const [i, to] of recipients.entries()) expect(await balance(to)).toBe(3_000_000n + BigInt(i) * 10_000n);
    expect(await balance(frozen)).toBe(0n);
  });

  it('Ethereum: a stuck on-chain batch is replaced for every payment it pays: each watched again, each paid once', async () => {
    const recipients = Array.from({ length: 3 }, () => privateKeyToAccount(generatePrivateKey()).address);
    const ids: string[] = [];
    const client = createPublicClient({ transport: http(eth.rpcUrl) });
    const attempts = async () =>
      (
        await t.db.pool.query<{ payment_intent_id: string; tx_id: string; status: string; tx_payments: number; tx_payment_index: number }>(
          'SELECT payment_intent_id, tx_id, status, tx_payments, tx_payment_index FROM payment_attempts WHERE payment_intent_id = ANY($1) ORDER BY created_at, tx_payment_index',
          [ids],
        )
      ).rows;
    await setAutomine(eth.rpcUrl, false);
    try {
      for (const [i, to] of recipients.entries()) ids.push(await pay(6 + i / 100, { ethereum_address: to }, `eth-stuck-batch-${i}`));
      await executeOnePoll(3);
      const [stuck] = await attempts();
      expect((await attempts()).map((a) => [a.tx_id, a.tx_payments])).toEqual(ids.map(() => [stuck!.tx_id, 3]));
      t.clock.advance(601_000);
      await confirm(t);
      for (const id of ids) expect((await read(id)).status).toBe('manual_review');

      // Resolved from one payment's page: the replacement pays the three, each back to broadcasted with its attempt.
      const replaced = await resolveManualReview(t.ctx, ids[1]!, 'replace', { audit: { ...testAudit('payment.resolve'), targets: [ids[1]!] } });
      expect(replaced.status).toBe('broadcasted');
      expect(replaced.tx_id).not.toBe(stuck!.tx_id);
      // One audit record for the action, naming every payment it moved.
      const { rows: audit } = await t.db.pool.query<{ targets: string[] }>("SELECT targets FROM audit_log WHERE action = 'payment.resolve' ORDER BY seq DESC LIMIT 1");
      expect([...audit[0]!.targets].sort()).toEqual([...ids].sort());
      for (const id of ids) expect((await read(id)).status).toBe('broadcasted');
      const after = await attempts();
      expect(after.filter((a) => a.tx_id === stuck!.tx_id).map((a) => a.status)).toEqual(['replaced', 'replaced', 'replaced']);
      // Each payment at its place in the stuck transaction: the replacement is rebuilt from its bytes.
      const place = (tx: string) => after.filter((a) => a.tx_id === tx).map((a) => [a.payment_intent_id, a.tx_payments, a.tx_payment_index]);
      expect(place(replaced.tx_id!)).toEqual(place(stuck!.tx_id));
      expect(after.filter((a) => a.tx_id === replaced.tx_id).map((a) => a.status)).toEqual(['broadcasted', 'broadcasted', 'broadcasted']);
    } finally {
      await setAutomine(eth.rpcUrl, true);
    }
    for (const id of ids) expect((await settle(id, () => mineBlocks(eth.rpcUrl, 1))).status).toBe('settled');
    const balance = (owner: Address) => client.readContract({ address: eth.usdcAddress, abi: ERC20, functionName: 'balanceOf', args: [owner] });
    for (const [i, to] of recipients.entries()) expect(await balance(to)).toBe(6_000_000n + BigInt(i) * 10_000n);
  });

  it('Ethereum: a replacement screens every recipient it pays: a listed one refuses it until two different operators force it', async () => {
    const recipients = Array.from({ length: 3 }, () => privateKeyToAccount(generatePrivateKey()).address);
    const ids: string[] = [];
    const attempts = async () =>
      (await t.db.pool.query('SELECT id, tx_id, status FROM payment_attempts WHERE payment_intent_id = ANY($1) ORDER BY id', [ids])).rows;
    const lastResolve = async () =>
      (await t.db.pool.query<{ actor: string; outcome: string; details: Record<string, unknown> }>(
        "SELECT actor, outcome, details FROM audit_log WHERE action = 'payment.resolve' ORDER BY seq DESC LIMIT 1",
      )).rows[0]!;
    const operator = (id: string) => testAudit('payment.resolve', { id, role: 'admin', peer: null });
    await setAutomine(eth.rpcUrl, false);
    try {
      for (const [i, to] of recipients.entries()) ids.push(await pay(7 + i / 100, { ethereum_address: to }, `eth-screened-batch-${i}`));
      await executeOnePoll(3);
      t.clock.advance(601_000);
      await confirm(t);
      for (const id of ids) expect((await read(id)).status).toBe('manual_review');
      // The third recipient is listed while the batch is stuck; the operator works from the first payment's page.
      appendFileSync(listFile, `${recipients[2]!.toLowerCase()} # OFAC SDN 2026-12-01\n`);
      await t.ctx.screener.reloadList();
      const stuck = await attempts();

      const res = await t.app.inject({ method: 'POST', url: `/admin/payments/${ids[0]}/resolve`, payload: { resolution: 'replace' } });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ code: 'REPLACEMENT_SCREENED', message: expect.stringContaining(`${ids[2]} (the screening list: OFAC SDN 2026-12-01)`) });
      expect((await lastResolve()).outcome).toBe('refused:REPLACEMENT_SCREENED');
      // In production, while operator accounts exist, the break-glass token and the CLI are nobody's eyes (decision 180).
      await createOperator(t.db.pool, t.ctx.config, { name: 'someone', role: 'approver' }, t.clock.now(), testAudit('operator.create'));
      const production = { ...t.ctx, config: { ...t.ctx.config, production: true, approvalsAllowBreakGlass: false } };
      for (const actor of [{ id: 'break-glass', role: 'admin' as const, peer: null }, { id: 'cli:0(root)', role: 'admin' as const, peer: null }]) {
        await expect(resolveManualReview(production, ids[0]!, 'replace', { force: true, audit: testAudit('payment.resolve', actor) })).rejects.toMatchObject({
          code: 'NAMED_OPERATOR_REQUIRED',
        });
      }
      // One operator's force is a request; the same operator's second force is not a second pair of eyes.
      await expect(resolveManualReview(t.ctx, ids[0]!, 'replace', { force: true, audit: operator('op_alice') })).rejects.toMatchObject({
        code: 'SCREENING_OVERRIDE_PENDING',
      });
      await expect(resolveManualReview(t.ctx, ids[2]!, 'replace', { force: true, audit: operator('op_alice') })).rejects.toMatchObject({ code: 'SELF_APPROVAL' });
      expect(await attempts()).toEqual(stuck);

      const replaced = await resolveManualReview(t.ctx, ids[1]!, 'replace', { force: true, audit: operator('op_bob') });
      expect(replaced.status).toBe('broadcasted');
      expect(await lastResolve()).toMatchObject({
        actor: 'op_bob',
        outcome: 'ok',
        details: { screening_override: { requested_by: 'op_alice', screened: [{ payment_intent_id: ids[2], by: 'list', list_source: 'OFAC SDN 2026-12-01' }] } },
      });
      const { rows: overrides } = await t.db.pool.query('SELECT requested_by, used_by FROM screening_overrides');
      expect(overrides).toEqual([{ requested_by: 'op_alice', used_by: 'op_bob' }]);
    } finally {
      await setAutomine(eth.rpcUrl, true);
    }
    for (const id of ids) expect((await settle(id, () => mineBlocks(eth.rpcUrl, 1))).status).toBe('settled');
  });

  it('Ethereum: a batch that reverts on chain is retried alone: the others settle, the recipient frozen meanwhile fails alone', async () => {
    const recipients = Array.from({ length: 3 }, () => privateKeyToAccount(generatePrivateKey()).address);
    const late = privateKeyToAccount(generatePrivateKey()).address;
    const ids: string[] = [];
    for (const [i, to] of [...recipients, late].entries()) ids.push(await pay(2 + i / 100, { ethereum_address: to }, `eth-revert-${i}`));
    const frozenLate = ids[3]!;
    // Prepared together while every recipient is fine; frozen between the signature and the send, so the batch is
    // mined and reverts (as when Circle freezes an address while a payroll is on its way).
    const real = t.ctx.adapters.ethereum!;
    let frozen = false;
    const ethereum = {
      ...real,
      broadcast: async (signed: Parameters<typeof real.broadcast>[0]) => {
        if (!frozen) await blacklistEthereumAddress({ rpcUrl: eth.rpcUrl, usdcAddress: eth.usdcAddress }, late);
        frozen = true;
        return real.broadcast(signed);
      },
    };
    await executeOnePoll(4, { ...t.ctx.adapters, ethereum });
    const attempts = async () =>
      (
        await t.db.pool.query<{ payment_intent_id: string; tx_id: string; status: string; tx_payments: number; fee: string | null }>(
          'SELECT payment_intent_id, tx_id, status, tx_payments, actual_fee_native::text AS fee FROM payment_attempts WHERE payment_intent_id = ANY($1) ORDER BY created_at, tx_payment_index',
          [ids],
        )
      ).rows;
    const [batch] = await attempts();
    const client = createPublicClient({ transport: http(eth.rpcUrl) });
    await mineBlocks(eth.rpcUrl, 2);
    const reverted = await client.getTransactionReceipt({ hash: batch!.tx_id as `0x${string}` });
    expect(reverted.status).toBe('reverted');

    // The confirmation worker fails the batch's attempts, books their shares of its gas, and retries each payment alone.
    await confirm(t);
    for (const id of ids) expect((await read(id)).status).toBe('retrying');
    const split = await attempts();
    expect(split.map((a) => [a.tx_id, a.status, a.tx_payments])).toEqual(ids.map(() => [batch!.tx_id, 'failed', 4]));
    expect(split.reduce((sum, a) => sum + BigInt(a.fee!), 0n)).toBe(reverted.gasUsed * reverted.effectiveGasPrice);

    await drainExecution(t, 1000, { together: true });
    for (const id of ids.slice(0, 3)) expect((await settle(id, () => mineBlocks(eth.rpcUrl, 1))).status).toBe('settled');
    expect((await read(frozenLate)).status).toBe('failed');
    const { rows: failed } = await t.db.pool.query("SELECT payload FROM webhook_events WHERE event_type = 'payment.failed' AND payment_intent_id = ANY($1)", [ids]);
    expect(failed.map((e) => e.payload.failure_reason)).toEqual(['reverted']);
    const retried = (await attempts()).filter((a) => a.tx_id !== batch!.tx_id);
    expect(retried.map((a) => [a.payment_intent_id, a.status, a.tx_payments]).sort()).toEqual(ids.slice(0, 3).map((id) => [id, 'confirmed', 1]).sort());
    expect(new Set(retried.map((a) => a.tx_id)).size).toBe(3);
    const balance = (owner: Address) => client.readContract({ address: eth.usdcAddress, abi: ERC20, functionName: 'balanceOf', args: [owner] });
    for (const [i, to] of recipients.entries()) expect(await balance(to)).toBe(2_000_000n + BigInt(i) * 10_000n);
    expect(await balance(late)).toBe(0n);
  });

  it('Ethereum: a run that lost the answer to a batch that then reverted finds it on its retry and retries each payment alone', async () => {
    const recipients = Array.from({ length: 2 }, () => privateKeyToAccount(generatePrivateKey()).address);
    const late = privateKeyToAccount(generatePrivateKey()).address;
    const ids: string[] = [];
    for (const [i, to] of [...recipients, late].entries()) ids.push(await pay(7 + i / 100, { ethereum_address: to }, `eth-lost-${i}`));
    // The bytes reach the node, and the answer is lost (the outcome is unknown); the recipient is frozen meanwhile, so
    // the batch is mined and reverts. The retry asks the chain before anything else.
    const real = t.ctx.adapters.ethereum!;
    const losing = {
      ...real,
      broadcast: async (signed: Parameters<typeof real.broadcast>[0]) => {
        await blacklistEthereumAddress({ rpcUrl: eth.rpcUrl, usdcAddress: eth.usdcAddress }, late);
        await real.broadcast(signed);
        throw new Error('connection reset after the request was written');
      },
    };
    await executeOnePoll(3, { ...t.ctx.adapters, ethereum: losing });
    for (const id of ids) expect((await read(id)).status).toBe('retrying');
    await mineBlocks(eth.rpcUrl, 1);

    await drainExecution(t, 1000, { together: true });
    for (const id of ids.slice(0, 2)) expect((await settle(id, () => mineBlocks(eth.rpcUrl, 1))).status).toBe('settled');
    expect((await read(ids[2]!)).status).toBe('failed');
    const { rows } = await t.db.pool.query<{ payment_intent_id: string; status: string; tx_payments: number }>(
      'SELECT payment_intent_id, status, tx_payments FROM payment_attempts WHERE payment_intent_id = ANY($1) ORDER BY created_at',
      [ids],
    );
    expect(rows.filter((r) => r.tx_payments === 3).map((r) => r.status)).toEqual(['failed', 'failed', 'failed']);
    expect(rows.filter((r) => r.status === 'confirmed').map((r) => [r.payment_intent_id, r.tx_payments]).sort()).toEqual(ids.slice(0, 2).map((id) => [id, 1]).sort());
  });

  it('reconciliation shows zero difference and the ledger verifies', async () => {
    const report = await reconcile(t.db.pool, t.ctx.adapters);
    for (const row of report) {
      expect(row.status, JSON.stringify(row)).toBe('ok');
      expect(row.difference_usdc).toBe('0');
    }
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });
});
