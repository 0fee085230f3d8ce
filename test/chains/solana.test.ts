// The Solana adapter against the LiteSVM devnet over real HTTP JSON-RPC, and a real PostgreSQL for the signing
// transaction (as the execution worker calls it). No sleeps: the devnet's slot ticker is paused and every test
// moves the chain forward explicitly.
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import * as kit from '@solana/kit';
import { createSolanaRpc, type Address, type Signature } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createSolanaAdapter, type SolanaAdapterOptions } from '../../src/chains/solana/adapter.js';
import { INSTRUCTION_ERROR_VERDICTS, TRANSACTION_ERROR_VERDICTS } from '../../src/chains/solana/error-table.js';
import { SolanaConfigError } from '../../src/chains/solana/errors.js';
import { generateSolanaSecretKey, InvalidSecretKeyError, parseSolanaSecretKey } from '../../src/chains/solana/keys.js';
import { createSolanaKeySigner } from '../../src/chains/signers/key.js';
import { ChainError, type ChainAdapter, type SignedTransfer, type TransferRequest } from '../../src/chains/port.js';
import { withTransaction } from '../../src/db/pool.js';
import { startSolanaDevnet, type SolanaDevnet } from '../../src/devnet/solana.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { signTransfer } from '../helpers/sign.js';
import { statusOf } from '../helpers/status.js';

const FINALIZE_AFTER_SLOTS = 32;
const TOKEN_ACCOUNT_BYTES = 165n;

let devnet: SolanaDevnet;
let db: TestDatabase;
let adapter: ChainAdapter;
let rpc: ReturnType<typeof createSolanaRpc>;
let intentSequence = 0;

beforeAll(async () => {
  [devnet, db] = await Promise.all([
    startSolanaDevnet({ finalizeAfterSlots: FINALIZE_AFTER_SLOTS }),
    createTestDatabase(),
  ]);
  devnet.pause();
  adapter = createSolanaAdapter(adapterOptions(devnet));
  rpc = createSolanaRpc(devnet.rpcUrl);
});

afterAll(async () => {
  await devnet?.stop();
  await db?.drop();
});

function adapterOptions(chain: SolanaDevnet, overrides: Partial<SolanaAdapterOptions> = {}): SolanaAdapterOptions {
  return {
    rpcUrl: chain.rpcUrl,
    usdcMint: chain.usdcMint,
    signer: createSolanaKeySigner(chain.treasuryKey),
    solUsdPrice: 150,
    rpcTimeoutSeconds: 5,
    ...overrides,
  };
}

function freshRecipient(): Address {
  return generateSolanaSecretKey().address;
}

function transfer(to: string, amountMicros: bigint): TransferRequest {
  intentSequence += 1;
  return { paymentIntentId: `pi_sol_test_${intentSequence}`, to, amountMicros };
}

function sign(request: TransferRequest, on: ChainAdapter = adapter): Promise<SignedTransfer> {
  return withTransaction(db.pool, (tx) => signTransfer(on, tx, request));
}

async function usdcOf(owner: Address, chain: SolanaDevnet = devnet): Promise<bigint> {
  const mint = chain.usdcMint as Address;
  const [ata] = await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const account = await createSolanaRpc(chain.rpcUrl).getAccountInfo(ata, { encoding: 'base64' }).send();
  if (!account.value) return 0n;
  const balance = await createSolanaRpc(chain.rpcUrl).getTokenAccountBalance(ata).send();
  return BigInt(balance.value.amount);
}

async function rentOfTokenAccount(): Promise<bigint> {
  return rpc.getMinimumBalanceForRentExemption(TOKEN_ACCOUNT_BYTES).send();
}

async function chainError(promise: Promise<unknown>): Promise<ChainError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ChainError);
  return error as ChainError;
}

/** Advances until the finalized block height reaches `height`. */
async function advanceFinalizedHeightTo(height: bigint): Promise<void> {
  const finalized = await rpc.getBlockHeight({ commitment: 'finalized' }).send();
  if (height > finalized) devnet.advanceSlots(Number(height - finalized));
}

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('paying out', () => {
  it('pays a new recipient: included, then final; its new token account holds exactly the amount', async () => {
    const recipient = freshRecipient();
    const treasuryBefore = await adapter.treasuryTokenBalance('usdc');
    const signed = await sign(transfer(recipient, 1_500_000n));

    expect(signed.meta.createdAta).toBe(true);
    expect(typeof signed.meta.lastValidBlockHeight).toBe('string');
    expect(signed.txId).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    expect(Buffer.from(signed.rawTx, 'base64').length).toBeGreaterThan(0);
    expect(JSON.parse(JSON.stringify(signed.meta))).toEqual(signed.meta);
    expect(await statusOf(adapter, signed)).toEqual({ state: 'unknown' }); // signed, never sent

    await adapter.broadcast(signed);
    // 'processed': in one leader's block, not voted on yet.
    expect(await statusOf(adapter, signed)).toEqual({ state: 'pending' });
    devnet.advanceSlots(1);
    expect(await statusOf(adapter, signed)).toEqual({ state: 'included', confirmations: 1 });
    devnet.advanceSlots(FINALIZE_AFTER_SLOTS - 1);
    const status = await statusOf(adapter, signed);

    const landed = await rpc
      .getTransaction(signed.txId as Signature, { encoding: 'json', maxSupportedTransactionVersion: 0 })
      .send();
    expect(landed?.meta?.err).toBeNull();
    expect(landed?.meta?.fee).toBe(5000n);
    // The native cost of the payout: the fee plus the rent of the recipient's new token account.
    expect(status).toEqual({ state: 'final', feeNative: (landed?.meta?.fee ?? 0n) + (await rentOfTokenAccount()) });

    expect(await usdcOf(recipient)).toBe(1_500_000n);
    expect(await adapter.treasuryTokenBalance('usdc')).toBe(treasuryBefore - 1_500_000n);
    const pre = landed?.meta?.preTokenBalances ?? [];
    const post = landed?.meta?.postTokenBalances ?? [];
    expect(pre.find((b) => b.owner === recipient)).toBeUndefined(); // the account did not exist before
    expect(post.find((b) => b.owner === recipient)).toMatchObject({
      mint: devnet.usdcMint,
      uiTokenAmount: { amount: '1500000', decimals: 6, uiAmount: 1.5, uiAmountString: '1.5' },
    });
    const treasuryPre = pre.find((b) => b.owner === devnet.treasuryAddress);
    const treasuryPost = post.find((b) => b.owner === devnet.treasuryAddress);
    expect(BigInt(treasuryPre?.uiTokenAmount.amount ?? 0) - BigInt(treasuryPost?.uiTokenAmount.amount ?? 0)).toBe(
      1_500_000n,
    );
    expect(landed?.transaction.message.accountKeys[0]).toBe(devnet.treasuryAddress);
  });

  it('does not create the token account again for a recipient that has one', async () => {
    const recipient = freshRecipient();
    const first = await sign(transfer(recipient, 1_000_000n));
    await adapter.broadcast(first);
    devnet.advanceSlots(1);

    const second = await sign(transfer(recipient, 2_000_000n));
    expect(second.meta.createdAta).toBe(false);
    await adapter.broadcast(second);
    devnet.advanceSlots(FINALIZE_AFTER_SLOTS);

    expect(await statusOf(adapter, second)).toEqual({ state: 'final', feeNative: 5000n });
    expect(await usdcOf(recipient)).toBe(3_000_000n);
  });

  it('moves the money once however often the same bytes are sent, even after their blockhash expired', async () => {
    const recipient = freshRecipient();
    const signed = await sign(transfer(recipient, 700_000n));
    await adapter.broadcast(signed);
    await adapter.broadcast(signed); // same slot: the node drops the duplicate
    devnet.advanceSlots(2);
    await adapter.broadcast(signed); // now visible to preflight: "already processed" is success
    devnet.advanceSlots(FINALIZE_AFTER_SLOTS);
    expect((await statusOf(adapter, signed)).state).toBe('final');

    // Long after: the node answers "blockhash not found", but the signature is known, so this is still success.
    await advanceFinalizedHeightTo(BigInt(signed.meta.lastValidBlockHeight as string) + 1n);
    await adapter.broadcast(signed);
    expect((await statusOf(adapter, signed)).state).toBe('final');
    expect(await usdcOf(recipient)).toBe(700_000n);
  });
});

describe('expiry', () => {
  it('reports expired only once the finalized height passes lastValidBlockHeight; signing anew works', async () => {
    const recipient = freshRecipient();
    const stale = await sign(transfer(recipient, 400_000n));
    const lastValidBlockHeight = BigInt(stale.meta.lastValidBlockHeight as string);

    await advanceFinalizedHeightTo(lastValidBlockHeight);
    expect(await statusOf(adapter, stale)).toEqual({ state: 'unknown' }); // could still land
    devnet.advanceSlots(1);
    expect(await statusOf(adapter, stale)).toEqual({ state: 'expired' });

    const refused = await chainError(adapter.broadcast(stale));
    expect(refused.reason).toBe('blockhash_expired');
    expect(refused.outcome).toBe('rejected');

    const fresh = await sign(transfer(recipient, 400_000n));
    expect(fresh.txId).not.toBe(stale.txId);
    await adapter.broadcast(fresh);
    devnet.advanceSlots(FINALIZE_AFTER_SLOTS);
    expect((await statusOf(adapter, fresh)).state).toBe('final');
    expect(await usdcOf(recipient)).toBe(400_000n);
  });
});

describe('refusals and failures', () => {
  it('refuses a transfer above the treasury balance: insufficient_funds, nothing lands, no fee', async () => {
    const treasuryUsdc = await adapter.treasuryTokenBalance('usdc');
    const lamportsBefore = (await rpc.getBalance(devnet.treasuryAddress as Address).send()).value;
    const signed = await sign(transfer(freshRecipient(), treasuryUsdc + 1n));

    // Missing funds are state: they may arrive while the blockhash is valid, so the refusal is not final yet.
    const refused = await chainError(adapter.broadcast(signed));
    expect(refused.reason).toBe('insufficient_funds');
    expect(refused.outcome).toBe('unknown');
    expect(refused.details).toContain('insufficient funds'); // the program logs from preflight
    expect(await statusOf(adapter, signed)).toEqual({ state: 'unknown' });
    expect((await rpc.getBalance(devnet.treasuryAddress as Address).send()).value).toBe(lamportsBefore);

    await advanceFinalizedHeightTo(BigInt(signed.meta.lastValidBlockHeight as string) + 1n);
    expect((await chainError(adapter.broadcast(signed))).outcome).toBe('rejected');
    expect(await statusOf(adapter, signed)).toEqual({ state: 'expired' });
  });

  it('reports a failure that landed (sent without preflight) once final, with the fee it cost', async () => {
    const treasuryUsdc = await adapter.treasuryTokenBalance('usdc');
    const recipient = freshRecipient();
    const first = await sign(transfer(recipient, 1n)); // give the recipient a token account: no rent below
    await adapter.broadcast(first);
    devnet.advanceSlots(1);
    const signed = await sign(transfer(recipient, treasuryUsdc + 1n));
    await rpc
      .sendTransaction(signed.rawTx as kit.Base64EncodedWireTransaction, { encoding: 'base64', skipPreflight: true })
      .send();

    expect(await statusOf(adapter, signed)).toEqual({ state: 'pending' });
    devnet.advanceSlots(FINALIZE_AFTER_SLOTS);
    expect(await statusOf(adapter, signed)).toMatchObject({
      state: 'failed',
      reason: 'insufficient_funds',
      feeNative: 5000n,
    });
  });

  it('refuses a token account, or the treasury itself, as the recipient (invalid_destination)', async () => {
    const recipient = freshRecipient();
    await adapter.broadcast(await sign(transfer(recipient, 1n)));
    devnet.advanceSlots(1);
    const [tokenAccount] = await findAssociatedTokenPda({
      owner: recipient,
      mint: devnet.usdcMint as Address,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    const refused = await chainError(sign(transfer(tokenAccount, 1n)));
    expect(refused.reason).toBe('invalid_destination');
    expect(refused.outcome).toBe('rejected');
    expect((await chainError(sign(transfer(devnet.treasuryAddress, 1n)))).reason).toBe('invalid_destination');
    expect((await chainError(sign(transfer('11111111111111111111111111111111', 1n)))).reason).toBe('invalid_destination');
  });

  it('refuses with insufficient_gas when the treasury cannot pay the new account rent, or any fee at all', async () => {
    const poor = await startSolanaDevnet({ treasuryLamports: 1_000_000n }); // fee: yes; 0.002 SOL rent: no
    const broke = await startSolanaDevnet({ treasuryLamports: 0n });
    try {
      for (const chain of [poor, broke]) {
        chain.pause();
        const chainAdapter = createSolanaAdapter(adapterOptions(chain));
        const signed = await sign(transfer(freshRecipient(), 1_000_000n), chainAdapter);
        const refused = await chainError(chainAdapter.broadcast(signed));
        expect(refused.reason).toBe('insufficient_gas');
        expect(refused.outcome).toBe('unknown'); // SOL may arrive while the blockhash is valid
      }
    } finally {
      await Promise.all([poor.stop(), broke.stop()]);
    }
  });
});

/** A node in front of the devnet that refuses every sendTransaction with `refusal` and passes the rest through. */
async function startRefusingNode(refusal: { code: number; message: string; data?: unknown }) {
  const server: HttpServer = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const request = JSON.parse(body.toString()) as { id: unknown; method: string };
      const answer =
        request.method === 'sendTransaction'
          ? Promise.resolve(JSON.stringify({ jsonrpc: '2.0', id: request.id, error: refusal }))
          : fetch(devnet.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((r) =>
              r.text(),
            );
      void answer.then(
        (text) => res.writeHead(200, { 'content-type': 'application/json' }).end(text),
        () => res.destroy(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    adapter: createSolanaAdapter(adapterOptions(devnet, { rpcUrl: `http://127.0.0.1:${port}` })),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A preflight failure as a validator sends it (JSON-RPC -32002 with the transaction error). */
function preflightFailure(err: unknown) {
  return {
    code: -32002,
    message: 'Transaction simulation failed',
    data: { accounts: null, err, innerInstructions: null, logs: [], replacementBlockhash: null, returnData: null, unitsConsumed: 0 },
  };
}

describe('a refused send', () => {
  it('is not final while the bytes can still land: an earlier send of them may (no second transfer)', async () => {
    const recipient = freshRecipient();
    const signed = await sign(transfer(recipient, 250_000n));
    const busy = await startRefusingNode(preflightFailure('AccountInUse'));
    try {
      const refused = await chainError(busy.adapter.broadcast(signed));
      expect(refused.reason).toBe('rpc_error');
      expect(refused.outcome).toBe('unknown');

      // The first send, whose answer was lost, reaches a leader after all: the transfer happens.
      await rpc
        .sendTransaction(signed.rawTx as kit.Base64EncodedWireTransaction, { encoding: 'base64', skipPreflight: true })
        .send();
      devnet.advanceSlots(FINALIZE_AFTER_SLOTS);
      expect((await statusOf(adapter, signed)).state).toBe('final');
      expect(await usdcOf(recipient)).toBe(250_000n);
      await busy.adapter.broadcast(signed); // refused again, but the signature is known: success
    } finally {
      await busy.close();
    }
  });

  it('becomes final (rejected) for state-dependent errors once the blockhash has expired', async () => {
    for (const err of ['WouldExceedMaxBlockCostLimit', { InstructionError: [1, { Custom: 1 }] }]) {
      const signed = await sign(transfer(freshRecipient(), 1n));
      const node = await startRefusingNode(preflightFailure(err));
      try {
        expect((await chainError(node.adapter.broadcast(signed))).outcome, JSON.stringify(err)).toBe('unknown');
        await advanceFinalizedHeightTo(BigInt(signed.meta.lastValidBlockHeight as string));
        expect((await chainError(node.adapter.broadcast(signed))).outcome, JSON.stringify(err)).toBe('unknown');
        devnet.advanceSlots(1);
        const refused = await chainError(node.adapter.broadcast(signed));
        expect(refused.outcome, JSON.stringify(err)).toBe('rejected');
        expect(await statusOf(adapter, signed)).toEqual({ state: 'expired' });
      } finally {
        await node.close();
      }
    }
  });

  it('is rejected at once only when the bytes themselves can never be valid', async () => {
    const signed = await sign(transfer(freshRecipient(), 1n));
    const cases: [{ code: number; message: string; data?: unknown }, 'rejected' | 'unknown'][] = [
      [preflightFailure('SignatureFailure'), 'rejected'],
      [preflightFailure('SanitizeFailure'), 'rejected'],
      [{ code: -32003, message: 'Transaction signature verification failure' }, 'rejected'],
      [{ code: -32602, message: 'Invalid params: unsupported preflightCommitment' }, 'unknown'],
      [{ code: -32015, message: 'Transaction version (0) is not supported' }, 'unknown'],
      [{ code: -32005, message: 'Node is unhealthy' }, 'unknown'],
    ];
    for (const [refusal, outcome] of cases) {
      const node = await startRefusingNode(refusal);
      try {
        expect((await chainError(node.adapter.broadcast(signed))).outcome, JSON.stringify(refusal)).toBe(outcome);
      } finally {
        await node.close();
      }
    }
  });
});

describe('an unreachable node', () => {
  it('fails with rpc_timeout and an unknown outcome when nothing listens; probe says not ok', async () => {
    const signed = await sign(transfer(freshRecipient(), 1n));
    const down = createSolanaAdapter(adapterOptions(devnet, { rpcUrl: `http://127.0.0.1:${await freePort()}` }));

    const error = await chainError(down.broadcast(signed));
    expect(error.reason).toBe('rpc_timeout');
    expect(error.outcome).toBe('unknown');
    expect((await chainError(statusOf(down, signed))).reason).toBe('rpc_timeout');
    const probe = await down.probe();
    expect(probe.ok).toBe(false);
    expect(probe.error).toBeTruthy();
  });

  it('gives up after rpcTimeoutSeconds when the node accepts but never answers', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const silent: HttpServer = createHttpServer(() => undefined);
    silent.on('connection', (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as { port: number };
      const hanging = createSolanaAdapter(
        adapterOptions(devnet, { rpcUrl: `http://127.0.0.1:${port}`, rpcTimeoutSeconds: 0.2 }),
      );
      const signed = await sign(transfer(freshRecipient(), 1n));
      const started = performance.now();
      const error = await chainError(hanging.broadcast(signed));
      expect(error.reason).toBe('rpc_timeout');
      expect(error.outcome).toBe('unknown');
      expect(performance.now() - started).toBeLessThan(3000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

describe('health, fees and addresses', () => {
  it('estimates 5000 lamports per signature at the configured SOL price and probes the node', async () => {
    expect(await adapter.estimateFee()).toEqual({ feeNative: 5000n, feeUsd: (5000 / 1e9) * 150 });
    const probe = await adapter.probe();
    expect(probe).toMatchObject({ ok: true, fee: { feeNative: 5000n } });
    expect(probe.finalitySeconds).toBeGreaterThan(0);
  });

  it('describes itself and validates addresses', () => {
    expect(adapter).toMatchObject({ chain: 'solana', nativeCurrency: 'SOL', nativeDecimals: 9, kind: 'rpc' });
    expect(adapter.typicalFinalitySeconds).toBe(13);
    expect(adapter.treasuryAddress()).toBe(devnet.treasuryAddress);
    expect(adapter.prepareReplacement).toBeUndefined();
    expect(adapter.isValidAddress(freshRecipient())).toBe(true);
    expect(adapter.isValidAddress('0x52908400098527886E0F7030069857D2E4169EE7')).toBe(false);
    expect(adapter.isValidAddress('3yZe7d')).toBe(false); // base58, but not 32 bytes
    expect(adapter.isValidAddress('')).toBe(false);
    expect(adapter.isValidAddress(devnet.treasuryAddress)).toBe(false); // it would pay itself
    expect(adapter.isValidAddress(devnet.usdcMint)).toBe(false);
    expect(adapter.isValidAddress('11111111111111111111111111111111')).toBe(false); // the System Program: nobody's wallet
  });
});

describe('treasury keys', () => {
  it('reads base58 and JSON-array secret keys to the same address', () => {
    const { secretKey, address } = generateSolanaSecretKey();
    const bytes = Array.from(kit.getBase58Encoder().encode(secretKey));
    expect(parseSolanaSecretKey(secretKey).address).toBe(address);
    expect(parseSolanaSecretKey(JSON.stringify(bytes)).address).toBe(address);
    expect(parseSolanaSecretKey(` ${JSON.stringify(bytes)}\n`).address).toBe(address);
  });

  it('refuses malformed keys with a clear error that does not repeat the key', () => {
    const { secretKey } = generateSolanaSecretKey();
    const bytes = Array.from(kit.getBase58Encoder().encode(secretKey));
    const mismatched = [...bytes.slice(0, 32), ...bytes.slice(32).map((b) => (b + 1) % 256)];
    const cases: [string, RegExp][] = [
      ['', /empty/],
      [secretKey.slice(0, 40), /expected 64 bytes/],
      [`${secretKey.slice(0, -1)}0`, /base58/], // 0 is not a base58 digit
      [JSON.stringify(bytes.slice(0, 32)), /expected 64 bytes, got 32/],
      [JSON.stringify([...bytes.slice(0, 63), 256]), /from 0 to 255/],
      ['[1, 2,', /not a JSON array/],
      [JSON.stringify(mismatched), /public key/],
    ];
    for (const [input, message] of cases) {
      let error: unknown;
      try {
        parseSolanaSecretKey(input);
      } catch (e) {
        error = e;
      }
      expect(error, input).toBeInstanceOf(InvalidSecretKeyError);
      expect((error as Error).message).toMatch(message);
      if (input.length > 8) expect((error as Error).message).not.toContain(input.slice(0, 8));
    }
  });

  it('refuses a bad key or mint when the adapter is created, before any RPC call', () => {
    expect(() => createSolanaKeySigner('nope')).toThrow(InvalidSecretKeyError);
    expect(() => createSolanaAdapter(adapterOptions(devnet, { usdcMint: 'not-a-mint' }))).toThrow(SolanaConfigError);
  });
});

describe('error classification', () => {
  it('classifies every transaction and instruction error code @solana/kit knows', () => {
    const codes = (prefix: string) =>
      Object.entries(kit)
        .filter(([name, value]) => name.startsWith(prefix) && typeof value === 'number')
        .map(([name, value]) => [name, value as number] as const);
    for (const [name, code] of codes('SOLANA_ERROR__TRANSACTION_ERROR__')) {
      expect(TRANSACTION_ERROR_VERDICTS[code], name).toBeDefined();
    }
    for (const [name, code] of codes('SOLANA_ERROR__INSTRUCTION_ERROR__')) {
      expect(INSTRUCTION_ERROR_VERDICTS[code], name).toBeDefined();
    }
  });
});

describe('devnet clock', () => {
  it('finalizes on its own while the slot ticker runs, and holds still while paused', async () => {
    const fast = await startSolanaDevnet({ slotMs: 5, finalizeAfterSlots: 3 });
    try {
      const fastAdapter = createSolanaAdapter(adapterOptions(fast));
      const signed = await sign(transfer(freshRecipient(), 1n), fastAdapter);
      await fastAdapter.broadcast(signed);
      await vi.waitFor(async () => expect((await statusOf(fastAdapter, signed)).state).toBe('final'), {
        timeout: 10_000,
        interval: 20,
      });
      fast.pause();
      const slot = fast.slot();
      const fastRpc = createSolanaRpc(fast.rpcUrl);
      for (let i = 0; i < 5; i++) {
        expect(await fastRpc.getSlot({ commitment: 'processed' }).send()).toBe(slot); // several slot lengths
      }
      fast.resume();
      await vi.waitFor(() => expect(fast.slot()).toBeGreaterThan(slot), { timeout: 10_000, interval: 10 });
    } finally {
      await fast.stop();
    }
  });
});

describe('devnet JSON-RPC', () => {
  async function post(body: unknown): Promise<Record<string, unknown>> {
    const response = await fetch(devnet.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(5000),
    });
    return (await response.json()) as Record<string, unknown>;
  }

  it('answers unknown methods with -32601 and malformed requests with JSON-RPC errors', async () => {
    expect(await post({ jsonrpc: '2.0', id: 1, method: 'getTeapot', params: [] })).toMatchObject({
      id: 1,
      error: { code: -32601 },
    });
    expect(await post({ jsonrpc: '2.0', id: 2, method: 'getBalance', params: ['nope'] })).toMatchObject({
      error: { code: -32602 },
    });
    expect(await post([{ jsonrpc: '2.0', id: 3, method: 'getHealth' }])).toEqual([
      { jsonrpc: '2.0', result: 'ok', id: 3 },
    ]);
  });

  it('accepts base58-encoded transactions and reports slots, heights and balances as numbers', async () => {
    const recipient = freshRecipient();
    const signed = await sign(transfer(recipient, 5n));
    const wire = kit.getBase58Decoder().decode(Buffer.from(signed.rawTx, 'base64'));
    // Like a validator, the default preflight bank is 'finalized', which does not know our 'confirmed' blockhash yet.
    expect(await post({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [wire] })).toMatchObject({
      error: { code: -32002, data: { err: 'BlockhashNotFound' } },
    });
    const sent = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'sendTransaction',
      params: [wire, { preflightCommitment: 'confirmed' }],
    });
    expect(sent).toMatchObject({ result: signed.txId });
    const statuses = await post({ jsonrpc: '2.0', id: 2, method: 'getSignatureStatuses', params: [[signed.txId]] });
    expect(statuses).toMatchObject({
      result: { value: [{ confirmations: 0, err: null, confirmationStatus: 'processed' }] },
    });
    const slot = await post({ jsonrpc: '2.0', id: 3, method: 'getSlot', params: [{ commitment: 'processed' }] });
    expect(typeof slot.result).toBe('number');
    expect(await usdcOf(recipient)).toBe(5n);
  });

  it('getTransaction takes the legacy positional encoding ([signature, "json"]), as real nodes do', async () => {
    // A legacy (unversioned) transaction: a client that names no maxSupportedTransactionVersion can read it.
    const treasury = parseSolanaSecretKey(devnet.treasuryKey);
    const latest = await rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
    const message = kit.pipe(
      kit.createTransactionMessage({ version: 'legacy' }),
      (m) => kit.setTransactionMessageFeePayerSigner(treasury.signer, m),
      (m) => kit.setTransactionMessageLifetimeUsingBlockhash(latest.value, m),
      (m) =>
        kit.appendTransactionMessageInstruction(
          getTransferSolInstruction({ source: treasury.signer, destination: freshRecipient(), amount: 1_000_000n }),
          m,
        ),
    );
    const legacy = await kit.signTransactionMessageWithSigners(message);
    const signature = kit.getSignatureFromTransaction(legacy);
    await rpc
      .sendTransaction(kit.getBase64EncodedWireTransaction(legacy), { encoding: 'base64', preflightCommitment: 'confirmed' })
      .send();
    // Our payouts are version 0: the same legacy request gets the error a real node gives such a client.
    const payout = await sign(transfer(freshRecipient(), 1n));
    await adapter.broadcast(payout);
    devnet.advanceSlots(FINALIZE_AFTER_SLOTS);

    const json = await post({ jsonrpc: '2.0', id: 1, method: 'getTransaction', params: [signature, 'json'] });
    expect(json).toMatchObject({ result: { version: 'legacy', meta: { err: null, fee: 5000 } } });
    const base64 = await post({ jsonrpc: '2.0', id: 2, method: 'getTransaction', params: [signature, 'base64'] });
    expect(base64).toMatchObject({ result: { transaction: [kit.getBase64EncodedWireTransaction(legacy), 'base64'] } });
    expect(await post({ jsonrpc: '2.0', id: 3, method: 'getTransaction', params: [payout.txId, 'json'] })).toMatchObject({
      error: { code: -32015 },
    });
    expect(await post({ jsonrpc: '2.0', id: 4, method: 'getTransaction', params: [signature, 'jsonParsedX'] })).toMatchObject({
      error: { code: -32602 },
    });
  });
});
