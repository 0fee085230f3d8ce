// On-chain batches on the devnet (issue 28): a payroll through POST /payout_batches, half on Ethereum (anvil, 1 s
// blocks unless BENCH_ONCHAIN_BLOCK_SECONDS says otherwise) and half on Solana, paid by `stableroute serve` once with batching (Ethereum through the devnet's
// batch-transfer contract, approved by the treasury) and once with Ethereum paying one transaction each. For each
// chain: the transactions, what a payment cost (its share of its transaction's fee, read from the attempts), the most
// payments one Ethereum block held, and the time from the request to the last `payment.settled` webhook. Each payroll runs twice:
// to new holders (fresh recipients: new balances, new token accounts), then again to the same recipients, now holders.
import { randomBytes } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import pg from 'pg';
import { createPublicClient, createWalletClient, erc20Abi, getAddress, http, maxUint256, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { TERMINAL_STATUSES } from '../../src/domain/payment-intent.js';
import { jsonRpc } from '../../test/helpers/devnet-process.js';
import { startBenchDevnet } from './devnet.js';
import { round, send } from './load.js';
import { PAYOUT_BATCH_ITEMS_MAX } from '../../src/bounds.js';
import { startReceiver } from './receiver.js';
import { createBenchDatabase, runCli, startService } from './service.js';

const KEY = { 'x-api-key': 'bench' };
/** How long a payroll may take to settle before the run fails. */
const SETTLE_LIMIT_MS = 900_000;
const POLL_MS = 250;

export interface ChainFigures {
  payments: number;
  settled: number;
  transactions: number;
  /** The chain's fee per payment, in its smallest unit (wei, lamports): the shares the attempts booked (Solana: with rent). */
  feePerPaymentNative: number;
  /** Ethereum: gas used per payment, from the receipts (the fee moves with the base fee; the gas does not). */
  gasPerPayment?: number;
  /** Solana: the transactions' fees alone (no rent) per payment, from the node. */
  lamportsFeePerPayment?: number;
  /** Ethereum: the most of these payments one block held. */
  paymentsPerBlockMax?: number;
}

export interface OnchainRun {
  batching: boolean;
  /** Whether the recipients already held the token (the same payroll paid a second time). */
  holders: 'new' | 'existing';
  /** From the payout batch requests to the last `payment.settled` webhook their merchant received. */
  seconds: number;
  /** `stableroute ledger verify` and `stableroute reconcile` after the run: exit 0 each. */
  ledgerClean: boolean;
  reconcileClean: boolean;
  ethereum: ChainFigures;
  solana: ChainFigures;
}

/**
 * `payments` payouts (half each chain) to fresh recipients, with batching and then without it on Ethereum (to other
 * fresh recipients), and both again to the same recipients, now existing holders: [batched, single] new, then existing.
 */
export async function onchainPhase(serverUrl: string, payments: number, blockSeconds: number): Promise<OnchainRun[]> {
  const devnet = await startBenchDevnet();
  try {
    const env = devnet.env;
    // The devnet deploys its contracts on 1 s blocks; the payrolls may then run on slower ones (mainnet: 12 s).
    if (blockSeconds !== 1) await jsonRpc(env.ETHEREUM_RPC_URL!, 'evm_setIntervalMining', [blockSeconds]);
    const contract = env.ETHEREUM_BATCH_CONTRACT;
    if (!contract) throw new Error('stableroute devnet printed no ETHEREUM_BATCH_CONTRACT');
    await approve(env.ETHEREUM_RPC_URL!, env.ETHEREUM_TREASURY_KEY! as Hex, env.ETHEREUM_USDC_ADDRESS! as Address, contract as Address);
    const single = { ...env, ETHEREUM_BATCH_CONTRACT: '' };
    const [toBatch, toSingle] = [recipients(payments), recipients(payments)];
    const runs: OnchainRun[] = [];
    for (const holders of ['new', 'existing'] as const) {
      runs.push(await payroll(serverUrl, env, toBatch, true, holders));
      runs.push(await payroll(serverUrl, single, toSingle, false, holders));
    }
    return runs;
  } finally {
    await devnet.stop();
  }
}

type Destination = { ethereum_address: string } | { solana_address: string };

/** `payments` fresh recipients, every other one on each chain. */
function recipients(payments: number): Destination[] {
  return Array.from({ length: payments }, (_, i) =>
    i % 2 === 0 ? { ethereum_address: getAddress(`0x${randomBytes(20).toString('hex')}`) } : { solana_address: getBase58Decoder().decode(randomBytes(32)) },
  );
}

/** The treasury's standing approval to the batch contract, as an operator gives it once. */
async function approve(rpcUrl: string, treasuryKey: Hex, usdc: Address, contract: Address): Promise<void> {
  const transport = http(rpcUrl);
  const reader = createPublicClient({ transport });
  if ((await reader.readContract({ address: usdc, abi: erc20Abi, functionName: 'allowance', args: [privateKeyToAccount(treasuryKey).address, contract] })) > 0n) return;
  const wallet = createWalletClient({ account: privateKeyToAccount(treasuryKey), transport });
  const hash = await wallet.writeContract({ address: usdc, abi: erc20Abi, functionName: 'approve', args: [contract, maxUint256], chain: null });
  await reader.waitForTransactionReceipt({ hash, pollingInterval: 100 });
}

async function payroll(serverUrl: string, env: Record<string, string>, to: readonly Destination[], batching: boolean, holders: OnchainRun['holders']): Promise<OnchainRun> {
  const db = await createBenchDatabase(serverUrl);
  const receiver = await startReceiver();
  const service = await startService('serve', { ...env, DATABASE_URL: db.url, RATE_LIMIT_PER_MINUTE: '0', DEV_MERCHANT_WEBHOOK_URL: receiver.url }).catch(
    async (error: unknown) => {
      await Promise.all([db.drop(), receiver.close()]);
      throw error;
    },
  );
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  try {
    const tag = randomBytes(4).toString('hex');
    const items = to.map((destination, i) => ({ idempotency_key: `payroll-${tag}-${i}`, amount_usd: (100 + (i % 100)) / 100, priority: 'fast', destination }));
    const started = Date.now();
    // As many payout batches as the items need (PAYOUT_BATCH_ITEMS_MAX each), sent at once.
    await Promise.all(
      Array.from({ length: Math.ceil(items.length / PAYOUT_BATCH_ITEMS_MAX) }, async (_, b) => {
        const part = items.slice(b * PAYOUT_BATCH_ITEMS_MAX, (b + 1) * PAYOUT_BATCH_ITEMS_MAX);
        const res = await send('POST', `${service.url}/payout_batches`, { idempotency_key: `payroll-${tag}-${b}`, items: part }, KEY);
        if (res.status !== 201) throw new Error(`payout batch refused: ${res.status} ${res.body.slice(0, 500)}`);
      }),
    );
    // Done when every payment is final and its merchant heard `payment.settled` for each one settled.
    const deadline = Date.now() + SETTLE_LIMIT_MS;
    const told = () => new Set(receiver.arrivals.filter((a) => a.eventType === 'payment.settled').map((a) => a.paymentIntentId));
    for (;;) {
      const { rows } = await pool.query<{ open: number; settled: number }>(
        "SELECT COUNT(*) FILTER (WHERE status <> ALL($1))::int AS open, COUNT(*) FILTER (WHERE status = 'settled')::int AS settled FROM payment_intents",
        [TERMINAL_STATUSES],
      );
      if (rows[0]!.open === 0 && told().size === rows[0]!.settled) break;
      if (Date.now() > deadline) throw new Error(`${rows[0]!.open} payments still open, ${rows[0]!.settled - told().size} settlements untold after ${SETTLE_LIMIT_MS / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const lastTold = receiver.arrivals.reduce((last, a) => (a.eventType === 'payment.settled' && a.at > last ? a.at : last), started);
    const seconds = round((lastTold - started) / 1000, 1);
    const cli = { ...env, DATABASE_URL: db.url };
    const [ledger, reconcile] = [await runCli(['ledger', 'verify'], cli), await runCli(['reconcile'], cli)];
    if (reconcile.code !== 0) console.error(`reconcile after the payroll:\n${reconcile.output}`);
    return { batching, holders, seconds, ledgerClean: ledger.code === 0, reconcileClean: reconcile.code === 0, ethereum: await figures(pool, 'ethereum', env.ETHEREUM_RPC_URL!), solana: await figures(pool, 'solana', null, env.SOLANA_RPC_URL!) };
  } finally {
    await pool.end();
    await service.stop();
    await Promise.all([db.drop(), receiver.close()]);
  }
}

async function figures(pool: pg.Pool, chain: string, ethereumRpcUrl: string | null, solanaRpcUrl: string | null = null): Promise<ChainFigures> {
  const { rows } = await pool.query<{ tx_id: string; fee: string | null; status: string }>(
    `SELECT a.tx_id, a.actual_fee_native::text AS fee, i.status
       FROM payment_intents i JOIN payment_attempts a ON a.payment_intent_id = i.id AND a.status = 'confirmed'
      WHERE i.selected_chain = $1`,
    [chain],
  );
  const { rows: all } = await pool.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM payment_intents WHERE selected_chain = $1', [chain]);
  const transactions = [...new Set(rows.map((r) => r.tx_id))];
  const fees = rows.reduce((sum, r) => sum + BigInt(r.fee ?? '0'), 0n);
  const result: ChainFigures = {
    payments: all[0]!.n,
    settled: rows.filter((r) => r.status === 'settled').length,
    transactions: transactions.length,
    feePerPaymentNative: rows.length === 0 ? 0 : Number(fees / BigInt(rows.length)),
  };
  const perTx = new Map<string, number>();
  for (const r of rows) perTx.set(r.tx_id, (perTx.get(r.tx_id) ?? 0) + 1);
  if (ethereumRpcUrl) {
    // Each transaction's block and gas, from the node: the payments of the transactions one block holds, added up.
    const reader = createPublicClient({ transport: http(ethereumRpcUrl) });
    const perBlock = new Map<bigint, number>();
    let gas = 0n;
    for (const [hash, n] of perTx) {
      const receipt = await reader.getTransactionReceipt({ hash: hash as Hex });
      perBlock.set(receipt.blockNumber, (perBlock.get(receipt.blockNumber) ?? 0) + n);
      gas += receipt.gasUsed;
    }
    result.paymentsPerBlockMax = Math.max(0, ...perBlock.values());
    result.gasPerPayment = rows.length === 0 ? 0 : Number(gas / BigInt(rows.length));
  }
  if (solanaRpcUrl) {
    let fees = 0n;
    for (const signature of perTx.keys()) {
      const res = await fetch(solanaRpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getTransaction', params: [signature, { encoding: 'json', commitment: 'confirmed', maxSupportedTransactionVersion: 0 }] }),
      });
      fees += BigInt(((await res.json()) as { result: { meta: { fee: number } } }).result.meta.fee);
    }
    result.lamportsFeePerPayment = rows.length === 0 ? 0 : Number(fees / BigInt(rows.length));
  }
  return result;
}
