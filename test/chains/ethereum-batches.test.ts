// The Ethereum adapter's on-chain batches (issue 28) against a real anvil node with the devnet's USDC (which has
// Circle's blacklist) and batch-transfer contract: the payouts prepared together go out in one transaction through the
// contract the treasury approved, signed once on one nonce; a recipient the token refuses is refused alone, the others
// still go together; without an unlimited approval (decision 188), or alone, a payout goes out as a transaction of its
// own, so that no batch signed while others are in flight can find the approval spent.
import { createPublicClient, createWalletClient, erc20Abi, getAddress, http, maxUint256, parseEventLogs, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEthereumAdapter, type EthereumAdapterOptions } from '../../src/chains/ethereum/adapter.js';
import { decodeBatch } from '../../src/chains/ethereum/batch.js';
import { parseSignedTransfer } from '../../src/chains/ethereum/transaction.js';
import { ChainError, type ChainAdapter, type PreparedTransfer, type TransferRequest } from '../../src/chains/port.js';
import { createEthereumKeySigner } from '../../src/chains/signers/key.js';
import { signAttempts } from '../../src/core/payments/outcomes/sign-attempts.js';
import { withTransaction } from '../../src/db/pool.js';
import { readIntent } from '../../src/db/queries/intents.js';
import { blacklistEthereumAddress } from '../../src/devnet/ethereum-blacklist.js';
import { mineBlocks, setAutomine, startEthereumDevnet, type EthereumDevnet } from '../../src/devnet/ethereum.js';
import { ConfigError } from '../../src/config.js';
import { createTestDatabase, seedMerchantAndQuote, type TestDatabase } from '../helpers/db.js';
import { clearance } from '../helpers/sign.js';

let devnet: EthereumDevnet;
let db: TestDatabase;
let reader: ReturnType<typeof createPublicClient>;
let sequence = 0;

beforeAll(async () => {
  [devnet, db] = await Promise.all([startEthereumDevnet(), createTestDatabase()]);
  reader = createPublicClient({ transport: http(devnet.rpcUrl), cacheTime: 0 });
  await seedMerchantAndQuote(db, { merchantId: 'mer_eth', quoteId: 'quo_eth', chain: 'ethereum' });
});

afterAll(async () => {
  await devnet?.stop();
  await db?.drop();
});

function options(batchContract: string | null): EthereumAdapterOptions {
  return {
    rpcUrl: devnet.rpcUrl,
    usdcAddress: devnet.usdcAddress,
    signer: createEthereumKeySigner(devnet.treasuryKey),
    chain: { name: 'ethereum', chainId: null, finality: 'confirmations', confirmations: 1, nativeCurrency: 'ETH', nativeUsdPrice: 3000, finalSeconds: 12, blockSeconds: 12 },
    rpcTimeoutSeconds: 5,
    batchContract,
  };
}

const fresh = (): Address => privateKeyToAccount(generatePrivateKey()).address;

function requests(recipients: Address[]): TransferRequest[] {
  return recipients.map((to, i) => ({ paymentIntentId: `pi_batch_${++sequence}`, to, amountMicros: BigInt(1_000_000 + i) }));
}

/** The treasury's standing approval to the batch contract, as an operator gives it once. */
async function approve(amount: bigint): Promise<void> {
  const wallet = createWalletClient({ account: privateKeyToAccount(devnet.treasuryKey), transport: http(devnet.rpcUrl) });
  const hash = await wallet.writeContract({ address: devnet.usdcAddress, abi: erc20Abi, functionName: 'approve', args: [devnet.batchContractAddress, amount], chain: null });
  await reader.waitForTransactionReceipt({ hash, pollingInterval: 50 });
}

const balanceOf = (owner: Address) => reader.readContract({ address: devnet.usdcAddress, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

/**
 * Signs each prepared transaction once, as the execution does, with one attempt per payment; sends it; waits for it
 * (with `mined: false`, leaves it in the node's pool).
 */
async function signAndSend(adapter: ChainAdapter, paid: { request: TransferRequest; prepared: PreparedTransfer }[], { mined = true } = {}) {
  const attempts = await withTransaction(db.pool, async (tx) => {
    for (const { request } of paid) {
      await tx.query(
        `INSERT INTO payment_intents (id, merchant_id, quote_id, idempotency_key, amount_micros, status, selected_chain,
           destination_address, created_at, updated_at)
         VALUES ($1, 'mer_eth', 'quo_eth', $1, $2, 'broadcasting', 'ethereum', $3, now(), now())`,
        [request.paymentIntentId, request.amountMicros, request.to],
      );
    }
    const items = [];
    for (const { request, prepared } of paid) items.push({ intent: (await readIntent(tx, request.paymentIntentId))!, prepared });
    return signAttempts(tx, adapter, items, new Date(), await clearance(tx, adapter.chain));
  });
  const transactions = [...new Map(attempts.map((a) => [a.signed.txId, a.signed])).values()];
  for (const signed of transactions) await adapter.broadcast(signed);
  if (!mined) return { attempts, transactions, receipts: [] };
  const receipts = await Promise.all(transactions.map((signed) => reader.waitForTransactionReceipt({ hash: signed.txId as `0x${string}`, pollingInterval: 50 })));
  return { attempts, transactions, receipts };
}

describe('Ethereum on-chain batches through the batch-transfer contract', () => {
  it('pays the payouts prepared together in one transaction, exactly, each to its recipient', async () => {
    await approve(maxUint256);
    const adapter = await createEthereumAdapter(options(devnet.batchContractAddress));
    const asked = requests(Array.from({ length: 6 }, fresh));
    const prepared = await adapter.prepareTransfers(asked);
    expect(prepared.every((p) => !(p instanceof ChainError))).toBe(true);
    expect(new Set(prepared).size).toBe(1);
    const treasuryBefore = await balanceOf(devnet.treasuryAddress);

    const { attempts, transactions, receipts } = await signAndSend(adapter, asked.map((request, k) => ({ request, prepared: prepared[k] as PreparedTransfer })));
    expect(transactions).toHaveLength(1);
    expect(attempts.map((a) => [a.tx_payments, a.tx_payment_index])).toEqual(asked.map((_, i) => [6, i]));
    const tx = parseSignedTransfer(transactions[0]!);
    expect(getAddress(tx.to)).toBe(getAddress(devnet.batchContractAddress));
    expect(decodeBatch(tx.data)!.payouts.map((p) => [p.to, p.amountMicros])).toEqual(asked.map((r) => [getAddress(r.to), r.amountMicros]));
    expect(receipts[0]!.status).toBe('success');

    const total = asked.reduce((sum, r) => sum + r.amountMicros, 0n);
    expect(await balanceOf(devnet.treasuryAddress)).toBe(treasuryBefore - total);
    for (const r of asked) expect(await balanceOf(r.to as Address)).toBe(r.amountMicros);
    expect(await balanceOf(devnet.batchContractAddress)).toBe(0n);
    const transfers = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipts[0]!.logs });
    expect(transfers.filter((t) => getAddress(t.args.from) === getAddress(devnet.batchContractAddress))).toHaveLength(6);

    // The chain's status of the batch is read once per payment like any transfer: final, one fee for the transaction.
    const statuses = await adapter.getStatuses(attempts.map((a) => a.signed));
    expect(statuses.every((s) => s.state === 'final')).toBe(true);
  });

  it('refuses alone a recipient the token refuses (blacklisted); the others go out together without it', async () => {
    await approve(maxUint256);
    const adapter = await createEthereumAdapter(options(devnet.batchContractAddress));
    const frozen = fresh();
    await blacklistEthereumAddress({ rpcUrl: devnet.rpcUrl, usdcAddress: devnet.usdcAddress }, frozen);
    const asked = requests([fresh(), frozen, fresh(), fresh()]);
    const prepared = await adapter.prepareTransfers(asked);
    expect(prepared[1]).toBeInstanceOf(ChainError);
    expect((prepared[1] as ChainError).outcome).toBe('rejected');
    expect(`${(prepared[1] as ChainError).details}`).toMatch(/blacklisted/i);
    const others = [0, 2, 3].map((k) => prepared[k]);
    expect(others.every((p) => !(p instanceof ChainError))).toBe(true);
    expect(new Set(others).size).toBe(1);

    const { transactions, receipts } = await signAndSend(adapter, [0, 2, 3].map((k) => ({ request: asked[k]!, prepared: prepared[k] as PreparedTransfer })));
    expect(transactions).toHaveLength(1);
    expect(receipts[0]!.status).toBe('success');
    for (const k of [0, 2, 3]) expect(await balanceOf(asked[k]!.to as Address)).toBe(asked[k]!.amountMicros);
    expect(await balanceOf(frozen)).toBe(0n);
  });

  it('refuses to start with an approval that is not unlimited, naming ETHEREUM_BATCH_CONTRACT', async () => {
    await approve(10_000_000n);
    const started = createEthereumAdapter(options(devnet.batchContractAddress));
    await expect(started).rejects.toBeInstanceOf(ConfigError);
    await expect(started).rejects.toThrow(/^ETHEREUM_BATCH_CONTRACT: .*not unlimited/);
    await approve(maxUint256);
    await expect(createEthereumAdapter(options(devnet.batchContractAddress))).resolves.toBeDefined();
  });

  it('never sends a batch the approval covers alone but not with the batches in flight before it', async () => {
    await approve(maxUint256);
    const adapter = await createEthereumAdapter(options(devnet.batchContractAddress));
    // Lowered after start-up to what one batch of two pulls, and a little more; not two.
    await approve(2_500_000n);
    await setAutomine(devnet.rpcUrl, false);
    try {
      const first = requests([fresh(), fresh()]);
      const second = requests([fresh(), fresh()]);
      const sent = [];
      for (const asked of [first, second]) {
        // The second is prepared while the first is in the pool: the approval at the latest block still covers it.
        const prepared = await adapter.prepareTransfers(asked);
        expect(prepared.every((p) => !(p instanceof ChainError))).toBe(true);
        sent.push(...(await signAndSend(adapter, asked.map((request, k) => ({ request, prepared: prepared[k] as PreparedTransfer })), { mined: false })).transactions);
      }
      await mineBlocks(devnet.rpcUrl);
      const receipts = await Promise.all(sent.map((signed) => reader.waitForTransactionReceipt({ hash: signed.txId as `0x${string}`, pollingInterval: 50 })));
      expect(receipts.map((r) => r.status)).toEqual(sent.map(() => 'success'));
      for (const r of [...first, ...second]) expect(await balanceOf(r.to as Address)).toBe(r.amountMicros);
    } finally {
      await setAutomine(devnet.rpcUrl, true);
    }
  });

  it('pays one transaction each while the approval is not unlimited, and a lone payout always', async () => {
    await approve(maxUint256);
    const adapter = await createEthereumAdapter(options(devnet.batchContractAddress));
    await approve(1n);
    const asked = requests([fresh(), fresh(), fresh()]);
    const prepared = await adapter.prepareTransfers(asked);
    expect(new Set(prepared).size).toBe(3);
    const { transactions } = await signAndSend(adapter, asked.map((request, k) => ({ request, prepared: prepared[k] as PreparedTransfer })));
    expect(transactions.map((t) => getAddress(parseSignedTransfer(t).to))).toEqual(asked.map(() => getAddress(devnet.usdcAddress)));
    for (const r of asked) expect(await balanceOf(r.to as Address)).toBe(r.amountMicros);

    await approve(maxUint256);
    const [alone] = await adapter.prepareTransfers(requests([fresh()]));
    expect(alone).not.toBeInstanceOf(ChainError);
  });
});
