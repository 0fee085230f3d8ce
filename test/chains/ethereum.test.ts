// The Ethereum adapter against a real anvil node and a real PostgreSQL: one node and one database for the file.
// No sleeps: blocks are mined on demand (anvil_mine), and the rare wait polls a condition with a deadline.
// Every transfer is signed the way the execution worker signs it: nonce and attempt row in one transaction.
import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, createTestClient, createWalletClient, getAddress, http, parseTransaction, recoverTransactionAddress, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createEthereumAdapter, type EthereumAdapterOptions } from '../../src/chains/ethereum/adapter.js';
import {
  ChainError,
  type ChainAdapter,
  type SignedTransfer,
  type TransferRequest,
  type TxStatus,
} from '../../src/chains/port.js';
import { signerAccount } from '../../src/chains/ethereum/account.js';
import { signTransaction } from '../../src/chains/ethereum/transaction.js';
import { createEthereumKeySigner } from '../../src/chains/signers/key.js';
import { openPkcs11EthereumSigner } from '../../src/chains/signers/pkcs11/ethereum.js';
import { createSoftHsmToken } from '../../src/devnet/softhsm.js';
import { ConfigError } from '../../src/config.js';
import { withTransaction } from '../../src/db/pool.js';
import { readIntent } from '../../src/db/queries/intents.js';
import { mineBlocks, setAutomine, startEthereumDevnet, type EthereumDevnet } from '../../src/devnet/ethereum.js';
import { TEST_USDC_ABI } from '../../src/devnet/usdc-token.js';
import { signAttempts } from '../../src/core/payments/outcomes/sign-attempts.js';
import { createTestDatabase, seedMerchantAndQuote, type TestDatabase } from '../helpers/db.js';
import { clearance, prepareOne, signReplacement, signTransfer } from '../helpers/sign.js';
import { startRpcProxy } from '../helpers/rpc-proxy.js';
import { statusOf } from '../helpers/status.js';

const CONFIRMATIONS = 3;

let devnet: EthereumDevnet;
let db: TestDatabase;
let adapter: ChainAdapter;
let reader: ReturnType<typeof createPublicClient>;
let intentSequence = 0;

beforeAll(async () => {
  [devnet, db] = await Promise.all([startEthereumDevnet(), createTestDatabase()]);
  adapter = await createEthereumAdapter(adapterOptions(devnet.rpcUrl));
  reader = createPublicClient({ transport: http(devnet.rpcUrl), cacheTime: 0 });
  await seedMerchantAndQuote(db, { merchantId: 'mer_eth', quoteId: 'quo_eth', chain: 'ethereum' });
});

afterAll(async () => {
  await devnet?.stop();
  await db?.drop();
});

function adapterOptions(rpcUrl: string, rpcTimeoutSeconds = 5): EthereumAdapterOptions {
  return {
    rpcUrl,
    usdcAddress: devnet.usdcAddress,
    signer: createEthereumKeySigner(devnet.treasuryKey),
    chain: { name: 'ethereum', chainId: null, finality: 'confirmations', confirmations: CONFIRMATIONS, nativeCurrency: 'ETH', nativeUsdPrice: 3000, finalSeconds: 24, blockSeconds: 12 },
    rpcTimeoutSeconds,
  };
}

function freshAddress(): Address {
  return privateKeyToAccount(generatePrivateKey()).address;
}

function transfer(to: Address, amountMicros: bigint): TransferRequest {
  intentSequence += 1;
  return { paymentIntentId: `pi_eth_test_${intentSequence}`, to, amountMicros };
}

/**
 * Signs as the execution worker does: prepared with no lock held, then the nonce and the attempt that holds it commit
 * in one transaction.
 */
async function sign(request: TransferRequest, signer: ChainAdapter = adapter): Promise<SignedTransfer> {
  const prepared = await prepareOne(signer, request);
  return withTransaction(db.pool, async (tx) => {
    await tx.query(
      `INSERT INTO payment_intents (id, merchant_id, quote_id, idempotency_key, amount_micros, status, selected_chain,
         destination_address, created_at, updated_at)
       VALUES ($1, 'mer_eth', 'quo_eth', $1, $2, 'broadcasting', 'ethereum', $3, now(), now())`,
      [request.paymentIntentId, request.amountMicros, request.to],
    );
    const intent = (await readIntent(tx, request.paymentIntentId))!;
    return (await signAttempts(tx, signer, [{ intent, prepared }], new Date(), await clearance(tx, signer.chain)))[0]!.signed;
  });
}

interface Forwarder {
  url: string;
  close(): Promise<void>;
}

/**
 * A JSON-RPC hop in front of the node: each request is forwarded after `delayMs` (a slow node), and the answers to
 * the methods in `loseAnswersOf` are never sent back (the request reached the node, the reply got lost).
 */
async function startForwarder(options: { delayMs?: number; loseAnswersOf?: string[] }): Promise<Forwarder> {
  const held = new Set<ServerResponse>();
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      try {
        const upstream = await fetch(devnet.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        const answer = Buffer.from(await upstream.arrayBuffer());
        const { method } = JSON.parse(body.toString()) as { method?: string };
        if (method && options.loseAnswersOf?.includes(method)) {
          held.add(res);
          return;
        }
        res.writeHead(upstream.status, { 'content-type': 'application/json' });
        res.end(answer);
      } catch {
        res.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () =>
      new Promise((resolve) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function storedAttempt(txId: string): Promise<{ estimated_fee_usd: number } | undefined> {
  const { rows } = await db.pool.query<{ estimated_fee_usd: number }>(
    'SELECT estimated_fee_usd FROM payment_attempts WHERE tx_id = $1',
    [txId],
  );
  return rows[0];
}

function usdcBalance(owner: Address): Promise<bigint> {
  return reader.readContract({ address: devnet.usdcAddress, abi: TEST_USDC_ABI, functionName: 'balanceOf', args: [owner] });
}

async function storedNextNonce(): Promise<number | null> {
  const { rows } = await db.pool.query<{ next_nonce: string }>(
    "SELECT next_nonce::text FROM chain_nonces WHERE chain = 'ethereum' AND address = $1",
    [devnet.treasuryAddress.toLowerCase()],
  );
  return rows[0] ? Number(rows[0].next_nonce) : null;
}

/** Leaves the node in automine, whatever the test did. Mine inside: anvil mines the pool when automine resumes. */
async function withMiningPaused<T>(fn: () => Promise<T>): Promise<T> {
  await setAutomine(devnet.rpcUrl, false);
  try {
    return await fn();
  } finally {
    await setAutomine(devnet.rpcUrl, true);
  }
}

/** anvil's automine mines shortly after eth_sendRawTransaction answers, not before: wait for the block. */
async function untilIncluded(signed: SignedTransfer): Promise<void> {
  await vi.waitFor(
    async () => expect(['included', 'final']).toContain((await statusOf(adapter, signed)).state),
    { timeout: 5_000, interval: 10 },
  );
}

async function expectChainError(promise: Promise<unknown>): Promise<ChainError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ChainError);
  return error as ChainError;
}

async function receiptFee(txId: string): Promise<bigint> {
  const receipt = await reader.getTransactionReceipt({ hash: txId as Hex });
  return receipt.gasUsed * receipt.effectiveGasPrice;
}

/**
 * The final status the node's own records give: the fee the receipt says was paid, and the timestamp of the block
 * that gave the transfer its last confirmation.
 */
async function finalStatus(txId: string): Promise<{ state: 'final'; feeNative: bigint; finalAt: Date }> {
  const receipt = await reader.getTransactionReceipt({ hash: txId as Hex });
  const finalBlock = await reader.getBlock({ blockNumber: receipt.blockNumber + BigInt(CONFIRMATIONS - 1) });
  return { state: 'final', feeNative: receipt.gasUsed * receipt.effectiveGasPrice, finalAt: new Date(Number(finalBlock.timestamp) * 1000) };
}

describe('ethereum adapter: identity and validation', () => {
  it('exposes the checksummed treasury address and chain facts', () => {
    expect(adapter.treasuryAddress()).toBe(devnet.treasuryAddress);
    expect(adapter.treasuryAddress()).toBe(getAddress(devnet.treasuryAddress));
    expect(adapter).toMatchObject({ chain: 'ethereum', kind: 'rpc', nativeCurrency: 'ETH', nativeDecimals: 18 });
    expect(adapter.typicalFinalitySeconds).toBe(CONFIRMATIONS * 12);
  });

  it('accepts checksummed, lower-case and upper-case hex addresses; refuses bad checksums and malformed ones', () => {
    const checksummed = '0x52908400098527886E0F7030069857D2E4169EE7'; // EIP-55's own example
    expect(adapter.isValidAddress(checksummed)).toBe(true);
    expect(adapter.isValidAddress(checksummed.toLowerCase())).toBe(true);
    expect(adapter.isValidAddress(`0x${checksummed.slice(2).toUpperCase()}`)).toBe(true);
    expect(adapter.isValidAddress('0x52908400098527886e0F7030069857D2E4169EE7')).toBe(false); // one letter's case flipped
    expect(adapter.isValidAddress(checksummed.slice(0, -1))).toBe(false);
    expect(adapter.isValidAddress(`${checksummed}00`)).toBe(false);
    expect(adapter.isValidAddress(checksummed.slice(2))).toBe(false);
    expect(adapter.isValidAddress('0x52908400098527886E0F7030069857D2E4169EZz')).toBe(false);
    expect(adapter.isValidAddress('0x0000000000000000000000000000000000000000')).toBe(false); // USDC reverts on it
    expect(adapter.isValidAddress('')).toBe(false);
  });

  it('refuses the treasury itself and the USDC token contract as recipients: such a payout moves nothing', async () => {
    for (const own of [devnet.treasuryAddress, devnet.usdcAddress]) {
      for (const spelling of [getAddress(own), own.toLowerCase(), `0x${own.slice(2).toUpperCase()}`]) {
        expect(adapter.isValidAddress(spelling), spelling).toBe(false);
      }
    }
    const nonceBefore = await storedNextNonce();
    const error = await expectChainError(sign(transfer(devnet.treasuryAddress, 1_000_000n)));
    expect(error).toMatchObject({ reason: 'invalid_destination', outcome: 'rejected' });
    expect(error.shortMessage).toContain('treasury');
    expect(await storedNextNonce()).toBe(nonceBefore);
  });

  it('refuses a malformed treasury key without echoing it', async () => {
    const bad = `${devnet.treasuryKey}ff`;
    expect(() => createEthereumKeySigner(bad)).toThrow(/^treasuryKey must be a 32-byte hex private key$/);
  });
});

describe('ethereum adapter: the token must have 6 decimals', () => {
  // Runtime code that answers 18 (one 32-byte word) to any call: decimals() of an 18-decimal ERC-20.
  const ANSWERS_18 = '0x601260005260206000f3';
  const anvil = () => createTestClient({ mode: 'anvil', transport: http(devnet.rpcUrl) });

  it('refuses at start-up a token with other decimals, naming ETHEREUM_USDC_ADDRESS', async () => {
    const token = freshAddress();
    await anvil().setCode({ address: token, bytecode: ANSWERS_18 });
    const creating = createEthereumAdapter({ ...adapterOptions(devnet.rpcUrl), usdcAddress: token });
    await expect(creating).rejects.toBeInstanceOf(ConfigError);
    await expect(creating).rejects.toThrow(/^ETHEREUM_USDC_ADDRESS: .*18 decimals; USDC has 6/);
  });

  it('refuses at start-up an address without a token contract', async () => {
    const creating = createEthereumAdapter({ ...adapterOptions(devnet.rpcUrl), usdcAddress: freshAddress() });
    await expect(creating).rejects.toThrow(/^ETHEREUM_USDC_ADDRESS: .*does not answer decimals\(\)/);
  });

  it('starts while the node is down, and refuses to sign until the token is checked', async () => {
    const token = freshAddress();
    await anvil().setCode({ address: token, bytecode: ANSWERS_18 });
    const proxy = await startRpcProxy(devnet.rpcUrl);
    try {
      proxy.down = true;
      const wrong = await createEthereumAdapter({ ...adapterOptions(proxy.url, 0.3), usdcAddress: token });
      const right = await createEthereumAdapter(adapterOptions(proxy.url, 0.3));
      proxy.down = false;
      const nonceBefore = await storedNextNonce();
      const error = await expectChainError(sign(transfer(freshAddress(), 1n), wrong));
      expect(error).toMatchObject({ reason: 'internal_error', outcome: 'rejected' });
      expect(error.shortMessage).toMatch(/^ETHEREUM_USDC_ADDRESS: .*18 decimals/);
      expect(await storedNextNonce()).toBe(nonceBefore);
      const signed = await sign(transfer(freshAddress(), 1n), right);
      await adapter.broadcast(signed);
      await untilIncluded(signed);
    } finally {
      await proxy.close();
    }
  });
});

describe('ethereum adapter: fees and health', () => {
  it('estimates a typical transfer fee in wei and USD, and probes the node', async () => {
    const fee = await adapter.estimateFee();
    expect(fee.feeNative).toBeGreaterThan(0n);
    expect(fee.feeUsd).toBeGreaterThan(0);
    const probe = await adapter.probe();
    expect(probe.ok).toBe(true);
    expect(probe.error).toBeUndefined();
    expect(probe.latencyMs).toBeGreaterThanOrEqual(0);
    expect(probe.fee?.feeNative).toBeGreaterThan(0n);
    expect(probe.finalitySeconds).toBe(CONFIRMATIONS * 12);
    expect(probe.congestion).toBeGreaterThanOrEqual(0);
    expect(probe.congestion).toBeLessThanOrEqual(1);
  });

  it('reads the treasury USDC balance from the token', async () => {
    expect(await adapter.treasuryTokenBalance('usdc')).toBe(await usdcBalance(devnet.treasuryAddress));
  });
});

describe('ethereum adapter: transfers', () => {
  it('signs, broadcasts and reaches final after enough blocks, moving exactly the amount', async () => {
    const recipient = freshAddress();
    const treasuryBefore = await adapter.treasuryTokenBalance('usdc');
    const signed = await sign(transfer(recipient, 12_345_678n));

    expect(signed.txId).toMatch(/^0x[0-9a-f]{64}$/);
    expect(signed.rawTx).toMatch(/^0x02/); // EIP-1559 envelope
    expect(JSON.parse(JSON.stringify(signed.meta))).toEqual(signed.meta);
    expect(await storedNextNonce()).toBe(Number(signed.meta.nonce) + 1);
    expect(await statusOf(adapter, signed)).toEqual({ state: 'unknown' }); // signing sends nothing

    await adapter.broadcast(signed);
    await untilIncluded(signed);
    // Automine put it in a block; final needs CONFIRMATIONS blocks counting that one.
    expect(await statusOf(adapter, signed)).toEqual({ state: 'included', confirmations: 1 });
    await mineBlocks(devnet.rpcUrl, CONFIRMATIONS - 2);
    expect(await statusOf(adapter, signed)).toEqual({ state: 'included', confirmations: CONFIRMATIONS - 1 });
    await mineBlocks(devnet.rpcUrl, 1);

    const status = await statusOf(adapter, signed);
    // Final, with the fee paid and when: the timestamp of the block that brought it to CONFIRMATIONS.
    expect(status).toEqual(await finalStatus(signed.txId));
    expect((status as { feeNative: bigint }).feeNative).toBeGreaterThan(0n);
    const included = await reader.getBlock({ blockNumber: (await reader.getTransactionReceipt({ hash: signed.txId as Hex })).blockNumber });
    expect((status as { finalAt: Date }).finalAt.getTime()).toBeGreaterThanOrEqual(Number(included.timestamp) * 1000);
    expect(await usdcBalance(recipient)).toBe(12_345_678n);
    expect(await adapter.treasuryTokenBalance('usdc')).toBe(treasuryBefore - 12_345_678n);
  });

  it('still reports a transfer final, without saying when, from a node that refuses the block read', async () => {
    const proxy = await startRpcProxy(devnet.rpcUrl);
    try {
      const viaProxy = await createEthereumAdapter(adapterOptions(proxy.url));
      const signed = await sign(transfer(freshAddress(), 1_000_000n));
      await adapter.broadcast(signed);
      await untilIncluded(signed);
      await mineBlocks(devnet.rpcUrl, CONFIRMATIONS - 1);
      proxy.refuseMethods.add('eth_getBlockByNumber');
      const { finalAt: _, ...verdict } = await finalStatus(signed.txId);
      expect(await statusOf(viaProxy, signed)).toEqual(verdict);
      expect(await viaProxy.getStatuses([signed])).toEqual([verdict]);
      proxy.refuseMethods.clear();
      expect(await statusOf(viaProxy, signed)).toEqual(await finalStatus(signed.txId));
    } finally {
      await proxy.close();
    }
  });

  it('treats re-broadcasting the same bytes as success, in the pool and after mining, with one transfer', async () => {
    const recipient = freshAddress();
    const signed = await sign(transfer(recipient, 1_000_000n));
    await withMiningPaused(async () => {
      await adapter.broadcast(signed);
      await adapter.broadcast(signed); // anvil: "transaction already imported"
      expect(await statusOf(adapter, signed)).toEqual({ state: 'pending' });
      await mineBlocks(devnet.rpcUrl, CONFIRMATIONS);
    });
    await adapter.broadcast(signed); // anvil: "nonce too low", but the node has our hash
    expect(await statusOf(adapter, signed)).toMatchObject({ state: 'final' });
    expect(await usdcBalance(recipient)).toBe(1_000_000n);
  });

  it('gives 10 concurrent signers in separate DB transactions 10 consecutive nonces, all final', async () => {
    const recipient = freshAddress();
    const amounts = Array.from({ length: 10 }, (_, i) => BigInt(i + 1) * 1_000n);
    const signedAll = await Promise.all(
      amounts.map(async (amount) => {
        const signed = await sign(transfer(recipient, amount));
        await adapter.broadcast(signed); // in whatever order they finish: anvil queues a nonce until the gap fills
        return signed;
      }),
    );

    const nonces = signedAll.map((s) => Number(s.meta.nonce)).sort((a, b) => a - b);
    expect(new Set(nonces).size).toBe(10);
    expect(nonces).toEqual(Array.from({ length: 10 }, (_, i) => nonces[0]! + i));
    expect(await storedNextNonce()).toBe(nonces[9]! + 1);

    // Out-of-order arrivals wait in the pool until the gap below them is mined: poll with a deadline.
    await vi.waitFor(
      async () => {
        await mineBlocks(devnet.rpcUrl, 1);
        const states = await Promise.all(signedAll.map((s) => statusOf(adapter, s)));
        expect(states.filter((s) => s.state !== 'included' && s.state !== 'final')).toEqual([]);
      },
      { timeout: 10_000, interval: 20 },
    );
    await mineBlocks(devnet.rpcUrl, CONFIRMATIONS);
    for (const signed of signedAll) {
      expect(await statusOf(adapter, signed)).toEqual(await finalStatus(signed.txId));
    }
    expect(await usdcBalance(recipient)).toBe(amounts.reduce((sum, a) => sum + a, 0n));
  });

  it('steps over nonces used by transactions sent from outside the service', async () => {
    const outside = createWalletClient({ account: privateKeyToAccount(devnet.treasuryKey), transport: http(devnet.rpcUrl) });
    const outsideHash = await outside.sendTransaction({ to: freshAddress(), value: 1n, chain: null });
    const outsideTx = await reader.getTransaction({ hash: outsideHash });
    expect(outsideTx.nonce).toBe((await storedNextNonce())!); // it took the nonce the service would have used next

    const recipient = freshAddress();
    const signed = await sign(transfer(recipient, 5n));
    expect(signed.meta.nonce).toBe(outsideTx.nonce + 1);
    await adapter.broadcast(signed);
    await untilIncluded(signed);
    await mineBlocks(devnet.rpcUrl, CONFIRMATIONS);
    expect(await statusOf(adapter, signed)).toMatchObject({ state: 'final' });
    expect(await usdcBalance(recipient)).toBe(5n);
  });

  it('replaces a stuck transfer with the same nonce and higher fees; only the replacement lands', async () => {
    const recipient = freshAddress();
    const request = transfer(recipient, 7_000_000n);
    const original = await sign(request);

    const replacement = await withMiningPaused(async () => {
      await adapter.broadcast(original);
      expect(await statusOf(adapter, original)).toEqual({ state: 'pending' });

      const bumped = await signReplacement(adapter, db.pool, request, original);
      expect(bumped.txId).not.toBe(original.txId);
      expect(bumped.meta.nonce).toBe(original.meta.nonce);
      expect(bumped.meta.gas).toBe(original.meta.gas);
      for (const field of ['maxFeePerGas', 'maxPriorityFeePerGas'] as const) {
        expect(BigInt(bumped.meta[field] as string) * 8n).toBeGreaterThanOrEqual(BigInt(original.meta[field] as string) * 9n);
      }
      await adapter.broadcast(bumped);
      expect(await statusOf(adapter, bumped)).toEqual({ state: 'pending' });
      // The node evicted the original from its pool for the better-paying replacement.
      expect(await statusOf(adapter, original)).toEqual({ state: 'unknown' });
      await mineBlocks(devnet.rpcUrl, 1);
      return bumped;
    });

    expect(await statusOf(adapter, replacement)).toEqual({ state: 'included', confirmations: 1 });
    // Its nonce is taken, but not at final depth yet: a reorg could still bring the original back, so no verdict.
    expect(await statusOf(adapter, original)).toEqual({ state: 'unknown' });

    await mineBlocks(devnet.rpcUrl, CONFIRMATIONS - 1);
    expect(await statusOf(adapter, replacement)).toEqual(await finalStatus(replacement.txId));
    expect(await statusOf(adapter, original)).toMatchObject({ state: 'failed', reason: 'nonce_conflict', feeNative: 0n });
    expect(await usdcBalance(recipient)).toBe(7_000_000n);
    // Re-sending the evicted original now is refused ("nonce too low"), but a refusal from one node proves nothing about
    // bytes another node may hold: an unknown outcome, which the status read above decides (decision 35).
    const error = await expectChainError(adapter.broadcast(original));
    expect(error).toMatchObject({ reason: 'nonce_conflict', outcome: 'unknown' });
  });

  it('cancels a stuck transfer on chain: zero ETH from the treasury to itself on its nonce; only the cancel lands', async () => {
    const recipient = freshAddress();
    const original = await sign(transfer(recipient, 3_000_000n));
    const cancel = await withMiningPaused(async () => {
      await adapter.broadcast(original);
      const signed = await (await adapter.prepareCancel!(original)).sign(db.pool, null);
      const tx = parseTransaction(signed.rawTx as Hex);
      expect(tx).toMatchObject({ to: devnet.treasuryAddress.toLowerCase(), nonce: original.meta.nonce, gas: 21_000n });
      expect(tx.value ?? 0n).toBe(0n);
      expect(tx.data ?? '0x').toBe('0x');
      for (const field of ['maxFeePerGas', 'maxPriorityFeePerGas'] as const) {
        expect(BigInt(signed.meta[field] as string) * 8n).toBeGreaterThanOrEqual(BigInt(original.meta[field] as string) * 9n);
      }
      await adapter.broadcast(signed);
      expect(await statusOf(adapter, original)).toEqual({ state: 'unknown' }); // evicted for the better-paying cancel
      await mineBlocks(devnet.rpcUrl, 1);
      return signed;
    });
    await mineBlocks(devnet.rpcUrl, CONFIRMATIONS - 1);
    expect(await statusOf(adapter, cancel)).toEqual(await finalStatus(cancel.txId));
    expect(await statusOf(adapter, original)).toMatchObject({ state: 'failed', reason: 'nonce_conflict', feeNative: 0n });
    expect(await usdcBalance(recipient)).toBe(0n);
  });

  it('signs a cancel on chain through a PKCS#11 token, like a transfer', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'stableroute-cancel-hsm-'));
    try {
      const token = await createSoftHsmToken(join(dir, 'softhsm'));
      const pin = (await readFile(token.pinFile, 'utf8')).trim();
      const signer = await openPkcs11EthereumSigner({ modulePath: token.module, tokenLabel: token.tokenLabel, pin, timeoutSeconds: 5, keyLabel: token.ethereumKeyLabel });
      const hsm = await createEthereumAdapter({ ...adapterOptions(devnet.rpcUrl), signer });
      try {
        const stuck = await signTransaction(signerAccount(signer), {
          chainId: devnet.chainId,
          nonce: 4,
          to: devnet.usdcAddress,
          data: '0xa9059cbb',
          gas: 60_000n,
          maxFeePerGas: 2_000_000_000n,
          maxPriorityFeePerGas: 1_000_000_000n,
        });
        const cancel = await (await hsm.prepareCancel!(stuck)).sign(db.pool, null);
        expect(await recoverTransactionAddress({ serializedTransaction: cancel.rawTx as `0x02${string}` })).toBe(token.ethereumAddress);
        expect(parseTransaction(cancel.rawTx as Hex)).toMatchObject({ to: token.ethereumAddress.toLowerCase(), nonce: 4, gas: 21_000n });
      } finally {
        await hsm.close!();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reports as the final fee exactly what the treasury paid: gasUsed x effectiveGasPrice of the receipt', async () => {
    const signed = await sign(transfer(freshAddress(), 2_000_000n));
    await adapter.broadcast(signed);
    await untilIncluded(signed);
    await mineBlocks(devnet.rpcUrl, CONFIRMATIONS - 1);
    const status = await statusOf(adapter, signed);

    const receipt = await reader.getTransactionReceipt({ hash: signed.txId as Hex });
    expect(status).toEqual(await finalStatus(signed.txId)); // its fee: the receipt's gasUsed x effectiveGasPrice
    // The price from EIP-1559's rule, with the block's base fee and the fee caps the transaction was signed with.
    const block = await reader.getBlock({ blockNumber: receipt.blockNumber });
    const baseFee = block.baseFeePerGas!;
    const tip = BigInt(signed.meta.maxPriorityFeePerGas as string);
    const headroom = BigInt(signed.meta.maxFeePerGas as string) - baseFee;
    expect(receipt.effectiveGasPrice).toBe(baseFee + (tip < headroom ? tip : headroom));
    // And what the treasury's ETH balance lost in that block, where our transfer was alone.
    expect(block.transactions).toEqual([signed.txId]);
    const [before, after] = await Promise.all(
      [receipt.blockNumber - 1n, receipt.blockNumber].map((blockNumber) => reader.getBalance({ address: devnet.treasuryAddress, blockNumber })),
    );
    expect((status as { feeNative: bigint }).feeNative).toBe(before! - after!);
  });

  it('finds by its hash a transfer whose send timed out after reaching the node; the next one takes the next nonce', async () => {
    const lossy = await startForwarder({ loseAnswersOf: ['eth_sendRawTransaction'] });
    try {
      const viaLossy = await createEthereumAdapter(adapterOptions(lossy.url, 0.5));
      const recipient = freshAddress();
      const signed = await sign(transfer(recipient, 4_000_000n));
      const error = await expectChainError(viaLossy.broadcast(signed));
      expect(error).toMatchObject({ reason: 'rpc_timeout', outcome: 'unknown' });
      // What the execution worker's next run asks before anything else: the stored hash has landed, so the attempt
      // is marked broadcast and nothing is signed anew.
      await untilIncluded(signed);
      expect(await statusOf(viaLossy, signed)).toMatchObject({ state: 'included' });
      expect((await reader.getTransaction({ hash: signed.txId as Hex })).nonce).toBe(signed.meta.nonce);
      await adapter.broadcast(signed); // re-sending the stored bytes is harmless

      const next = await sign(transfer(freshAddress(), 1n));
      expect(next.meta.nonce).toBe(Number(signed.meta.nonce) + 1);
      await adapter.broadcast(next);
      await untilIncluded(next);
      await mineBlocks(devnet.rpcUrl, CONFIRMATIONS);
      expect(await statusOf(adapter, signed)).toMatchObject({ state: 'final' });
      expect(await usdcBalance(recipient)).toBe(4_000_000n); // paid once
    } finally {
      await lossy.close();
    }
  });

  it('follows the chain, not a stored counter: after a chain reset the next transfer takes the nonce the chain expects', async () => {
    // What a devnet restarted under a database that kept its state looks like to the allocator.
    await db.pool.query("UPDATE chain_nonces SET next_nonce = next_nonce + 1000 WHERE chain = 'ethereum' AND address = $1", [
      devnet.treasuryAddress.toLowerCase(),
    ]);
    const expected = await reader.getTransactionCount({ address: devnet.treasuryAddress, blockTag: 'pending' });
    const signed = await sign(transfer(freshAddress(), 1n));
    expect(signed.meta.nonce).toBe(expected);
    await adapter.broadcast(signed);
    await untilIncluded(signed);
  });

  it('logs its work without ever writing the private key', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) });
    const logged = await createEthereumAdapter({ ...adapterOptions(devnet.rpcUrl), logger });
    const request = transfer(freshAddress(), 3n);
    const signed = await sign(request, logged);
    await logged.broadcast(signed);
    await untilIncluded(signed);
    await signReplacement(logged, db.pool, request, signed); // signed, never sent
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines.join('\n').toLowerCase()).not.toContain(devnet.treasuryKey.slice(2).toLowerCase());
  });

  it('refuses to re-sign a different transfer as a replacement', async () => {
    const request = transfer(freshAddress(), 10n);
    const signed = await sign(request);
    const error = await expectChainError(signReplacement(adapter, db.pool, { ...request, amountMicros: 11n }, signed));
    expect(error.reason).toBe('internal_error');
    await adapter.broadcast(signed); // keep the nonce sequence gap-free for the tests below
    await untilIncluded(signed);
  });
});

describe('ethereum adapter: node unreachable', () => {
  let blackHole: Server;
  let blackHoleUrl: string;
  const held = new Set<Socket>();
  beforeAll(async () => {
    // Accepts connections and never answers: the request can only end by our timeout.
    blackHole = createServer((socket) => {
      held.add(socket);
      socket.on('close', () => held.delete(socket));
    });
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    blackHoleUrl = `http://127.0.0.1:${(blackHole.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => blackHole.close(resolve));
  });

  async function closedPortUrl(): Promise<string> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    return `http://127.0.0.1:${port}`;
  }

  it('reports a refused connection as rpc_timeout with an unknown outcome, and probe() as not ok', async () => {
    const down = await createEthereumAdapter(adapterOptions(await closedPortUrl(), 1));
    const signed = await sign(transfer(freshAddress(), 1n)); // signed on the live node
    const error = await expectChainError(down.broadcast(signed));
    expect(error).toMatchObject({ reason: 'rpc_timeout', outcome: 'unknown' });
    expect(error.shortMessage).toContain('eth_sendRawTransaction');
    expect(error.cause).toBeDefined();
    const probe = await down.probe();
    expect(probe.ok).toBe(false);
    expect(probe.error).toBeTruthy();
    // Signing needs the node too; it fails before any nonce is taken, and nothing was sent.
    const nonceBefore = await storedNextNonce();
    const signing = withTransaction(db.pool, (tx) => signTransfer(down, tx, transfer(freshAddress(), 1n)));
    const signError = await expectChainError(signing);
    expect(signError).toMatchObject({ reason: 'rpc_timeout', outcome: 'rejected' });
    expect(await storedNextNonce()).toBe(nonceBefore);
    await adapter.broadcast(signed); // the live node takes it: no gap for later tests
    await untilIncluded(signed);
  });

  it('reports a node that never answers as rpc_timeout with an unknown outcome within the timeout', async () => {
    const silent = await createEthereumAdapter(adapterOptions(blackHoleUrl, 0.3));
    const signed = await sign(transfer(freshAddress(), 1n));
    const started = Date.now();
    const error = await expectChainError(silent.broadcast(signed));
    expect(error).toMatchObject({ reason: 'rpc_timeout', outcome: 'unknown' });
    expect(Date.now() - started).toBeLessThan(5_000); // sendRawTransaction is not retried
    await adapter.broadcast(signed);
    await untilIncluded(signed);
  });

  // Callers hold row locks while they wait (getStatuses under FOR UPDATE): a timeout retried, or several sequential
  // reads each with its own timeout, would hold them for a multiple of RPC_TIMEOUT_SECONDS.
  const TIMEOUT_SECONDS = 0.5;
  const WITHIN_MS = 2 * TIMEOUT_SECONDS * 1000; // one timeout, with room for a busy machine

  async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
    const started = performance.now();
    const result = await work();
    return [result, performance.now() - started];
  }

  it('ends every call to a node that never answers after one timeout, with no retries', async () => {
    const [silent, startMs] = await timed(async () => createEthereumAdapter(adapterOptions(blackHoleUrl, TIMEOUT_SECONDS)));
    expect(startMs).toBeLessThan(WITHIN_MS);
    const request = transfer(freshAddress(), 1n);
    const signed = await sign(request);
    const calls: [string, () => Promise<unknown>][] = [
      ['getStatuses', () => statusOf(silent, signed)],
      ['prepareTransfers', () => prepareOne(silent, transfer(freshAddress(), 1n))],
      ['prepareReplacement', () => silent.prepareReplacement!([request], signed)],
      ['estimateFee', () => silent.estimateFee()],
      ['treasuryTokenBalance', () => silent.treasuryTokenBalance('usdc')],
      ['treasuryNativeBalance', () => silent.treasuryNativeBalance()],
    ];
    for (const [name, call] of calls) {
      const [error, ms] = await timed(() => expectChainError(call()));
      expect(error.reason, name).toBe('rpc_timeout');
      expect(ms, name).toBeLessThan(WITHIN_MS);
    }
    const [probe, probeMs] = await timed(() => silent.probe());
    expect(probe.ok).toBe(false);
    expect(probeMs).toBeLessThan(WITHIN_MS);
    await adapter.broadcast(signed);
    await untilIncluded(signed);
  });

  it('bounds a whole status read by one timeout when a slow node answers each of its requests in time', async () => {
    const slow = await startForwarder({ delayMs: 300 });
    try {
      const signed = await sign(transfer(freshAddress(), 1n));
      await adapter.broadcast(signed);
      await untilIncluded(signed);
      const viaSlow = await createEthereumAdapter(adapterOptions(slow.url, TIMEOUT_SECONDS));
      // A mined transfer takes two reads in sequence (receipt, block number): 600 ms, past the 500 ms budget.
      const [error, ms] = await timed(() => expectChainError(statusOf(viaSlow, signed)));
      expect(error).toMatchObject({ reason: 'rpc_timeout' });
      expect(ms).toBeLessThan(WITHIN_MS);
    } finally {
      await slow.close();
    }
  });

  it('signs locally: once prepared, signing and storing the attempt (under the nonce lock) ask the node nothing', async () => {
    const hop = await startForwarder({});
    const viaHop = await createEthereumAdapter(adapterOptions(hop.url, TIMEOUT_SECONDS));
    const request = transfer(freshAddress(), 1n);
    const prepared = await prepareOne(viaHop, request);
    await hop.close(); // from here on, any request of viaHop's would fail
    expect(prepared.feeEstimate.feeUsd).toBeGreaterThan(0);
    const signed = await withTransaction(db.pool, async (tx) => {
      await tx.query(
        `INSERT INTO payment_intents (id, merchant_id, quote_id, idempotency_key, amount_micros, status, selected_chain,
           destination_address, created_at, updated_at)
         VALUES ($1, 'mer_eth', 'quo_eth', $1, $2, 'broadcasting', 'ethereum', $3, now(), now())`,
        [request.paymentIntentId, request.amountMicros, request.to],
      );
      return (await signAttempts(tx, viaHop, [{ intent: (await readIntent(tx, request.paymentIntentId))!, prepared }], new Date(), await clearance(tx, viaHop.chain)))[0]!.signed;
    });
    expect((await storedAttempt(signed.txId))?.estimated_fee_usd).toBe(prepared.feeEstimate.feeUsd);
    await adapter.broadcast(signed);
    await untilIncluded(signed);
  });
});

// Runs last: it drains the treasury.
describe('ethereum adapter: transfers the token refuses', () => {
  // Decision: a transfer that the node's gas estimate shows would revert is refused at signing, before a nonce is
  // taken and before any fee is spent: insufficient_funds when the treasury holds less USDC than the amount. A
  // transfer that only starts failing after signing (state changed in between) is mined, reverts, pays its fee,
  // and is reported as failed/reverted once final.
  it('refuses at signing a transfer above the treasury USDC balance, without taking a nonce', async () => {
    const balance = await adapter.treasuryTokenBalance('usdc');
    const nonceBefore = await storedNextNonce();
    const error = await expectChainError(sign(transfer(freshAddress(), balance + 1n)));
    expect(error).toMatchObject({ reason: 'insufficient_funds', outcome: 'rejected' });
    expect(error.details).toContain(String(balance));
    expect(await storedNextNonce()).toBe(nonceBefore);
  });

  it('reports a transfer that reverts on chain as failed/reverted with the fee it paid', async () => {
    const balance = await adapter.treasuryTokenBalance('usdc');
    const drain = freshAddress();
    const late = freshAddress();
    const [drainTx, lateTx] = await withMiningPaused(async () => {
      const first = await sign(transfer(drain, balance));
      await adapter.broadcast(first);
      // Estimated against the latest block, where the treasury still holds `balance`: signing succeeds.
      const second = await sign(transfer(late, 1n));
      await adapter.broadcast(second);
      await mineBlocks(devnet.rpcUrl, 1); // both in one block, the drain first (lower nonce)
      return [first, second];
    });
    // Included and reverted, but not final: no verdict yet.
    expect(await statusOf(adapter, lateTx)).toEqual({ state: 'included', confirmations: 1 });
    await mineBlocks(devnet.rpcUrl, CONFIRMATIONS - 1);

    const status = (await statusOf(adapter, lateTx)) as Extract<TxStatus, { state: 'failed' }>;
    expect(status).toMatchObject({ state: 'failed', reason: 'reverted' });
    expect(status.feeNative).toBe(await receiptFee(lateTx.txId));
    expect(status.feeNative).toBeGreaterThan(0n);
    expect(await statusOf(adapter, drainTx)).toMatchObject({ state: 'final' });
    expect(await usdcBalance(drain)).toBe(balance);
    expect(await usdcBalance(late)).toBe(0n);
    expect(await adapter.treasuryTokenBalance('usdc')).toBe(0n);
  });
});
