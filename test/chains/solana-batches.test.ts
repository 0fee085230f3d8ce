// On-chain batches on Solana (issue 28): one transaction pays several payouts, against the LiteSVM devnet over real
// JSON-RPC. No sleeps: the devnet's slot ticker is paused and every test moves the chain forward explicitly.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSolanaRpc, getBase64Encoder, type Address, type Base64EncodedWireTransaction, type Signature } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SOLANA_BATCH_TRANSFERS_MAX, SOLANA_TRANSACTION_BYTES_MAX } from '../../src/bounds.js';
import { transactionsOf as placesOf } from '../../src/core/payments/outcomes/sign-attempts.js';
import { createSolanaAdapter } from '../../src/chains/solana/adapter.js';
import { generateSolanaSecretKey } from '../../src/chains/solana/keys.js';
import { decodeMeta, encodeMeta } from '../../src/chains/solana/meta.js';
import { createSolanaKeySigner } from '../../src/chains/signers/key.js';
import { ChainError, type ChainAdapter, type PreparedTransfer, type SignedTransfer, type TransferRequest } from '../../src/chains/port.js';
import { withTransaction } from '../../src/db/pool.js';
import { startSolanaDevnet, type SolanaDevnet } from '../../src/devnet/solana.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { statusOf } from '../helpers/status.js';

const FINALIZE_AFTER_SLOTS = 32;
const TOKEN_ACCOUNT_BYTES = 165n;
/** The priority fee price a node in front of the devnet reports (the devnet itself has no competition: 0). */
const PRIORITY_PRICE_MICRO_LAMPORTS = 50_000n;

let devnet: SolanaDevnet;
let db: TestDatabase;
let adapter: ChainAdapter;
let rpc: ReturnType<typeof createSolanaRpc>;
let sequence = 0;

beforeAll(async () => {
  [devnet, db] = await Promise.all([startSolanaDevnet({ finalizeAfterSlots: FINALIZE_AFTER_SLOTS }), createTestDatabase()]);
  devnet.pause();
  adapter = adapterOn(devnet.rpcUrl);
  rpc = createSolanaRpc(devnet.rpcUrl);
});

afterAll(async () => {
  await devnet?.stop();
  await db?.drop();
});

function adapterOn(rpcUrl: string): ChainAdapter {
  return createSolanaAdapter({
    rpcUrl,
    usdcMint: devnet.usdcMint,
    signer: createSolanaKeySigner(devnet.treasuryKey),
    solUsdPrice: 150,
    rpcTimeoutSeconds: 5,
  });
}

function freshRecipients(count: number): Address[] {
  return Array.from({ length: count }, () => generateSolanaSecretKey().address);
}

function payouts(recipients: readonly string[], amountOf = (k: number) => 1_000_000n + BigInt(k) * 10_001n): TransferRequest[] {
  return recipients.map((to, k) => {
    sequence += 1;
    return { paymentIntentId: `pi_solbatch_${String(sequence).padStart(6, '0')}`, to, amountMicros: amountOf(k) };
  });
}

/** The distinct transactions of an answer, in order, and for each the places it pays (as signing groups them). */
function transactionsOf(answers: readonly (PreparedTransfer | ChainError)[]): Map<PreparedTransfer, number[]> {
  const transactions = placesOf(answers as PreparedTransfer[]);
  for (const answer of transactions.keys()) if (answer instanceof ChainError) transactions.delete(answer);
  return transactions;
}

/** Signs each distinct transaction once, as the core does (src/core/payments/outcomes/sign-attempts.ts). */
function signAll(prepared: Iterable<PreparedTransfer>): Promise<SignedTransfer[]> {
  return withTransaction(db.pool, async (tx) => {
    const signed: SignedTransfer[] = [];
    for (const p of prepared) signed.push(await p.sign(tx, null));
    return signed;
  });
}

async function usdcOf(owner: string): Promise<bigint> {
  const [ata] = await findAssociatedTokenPda({ owner: owner as Address, mint: devnet.usdcMint as Address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  if (!(await rpc.getAccountInfo(ata, { encoding: 'base64' }).send()).value) return 0n;
  return BigInt((await rpc.getTokenAccountBalance(ata).send()).value.amount);
}

function wireBytes(signed: SignedTransfer): number {
  return getBase64Encoder().encode(signed.rawTx).length;
}

async function landed(signed: SignedTransfer) {
  const transaction = await rpc.getTransaction(signed.txId as Signature, { encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
  expect(transaction?.meta?.err).toBeNull();
  return transaction!;
}

/** Sends every transaction, finalizes them, and checks each is final. */
async function land(signed: readonly SignedTransfer[]): Promise<void> {
  for (const s of signed) await adapter.broadcast(s);
  devnet.advanceSlots(FINALIZE_AFTER_SLOTS);
  for (const s of signed) expect((await statusOf(adapter, s)).state).toBe('final');
}

/** Gives each recipient a token account (whatever batches that takes), so later payouts to them create none. */
async function withTokenAccounts(recipients: readonly string[]): Promise<void> {
  const answers = await adapter.prepareTransfers(payouts(recipients, () => 1n));
  await land(await signAll(transactionsOf(answers).keys()));
}

async function balances(owners: readonly string[]): Promise<bigint[]> {
  return Promise.all(owners.map(usdcOf));
}

/** A node in front of the devnet that reports a non-zero priority fee price, as a busy cluster does. */
async function startBusyNode(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const request = JSON.parse(body.toString()) as { id: unknown; method: string };
      const answer =
        request.method === 'getRecentPrioritizationFees'
          ? Promise.resolve(JSON.stringify({ jsonrpc: '2.0', id: request.id, result: [{ slot: 1, prioritizationFee: Number(PRIORITY_PRICE_MICRO_LAMPORTS) }] }))
          : fetch(devnet.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((r) => r.text());
      void answer.then(
        (text) => res.writeHead(200, { 'content-type': 'application/json' }).end(text),
        () => res.destroy(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('one transaction pays several payouts', () => {
  it('pays 12 recipients that have token accounts with one signature: each gets exactly its amount', async () => {
    const recipients = freshRecipients(12);
    await withTokenAccounts(recipients);
    const requests = payouts(recipients);
    const [before, treasuryBefore] = await Promise.all([balances(recipients), adapter.treasuryTokenBalance('usdc')]);

    const answers = await adapter.prepareTransfers(requests);
    const transactions = transactionsOf(answers);
    expect(transactions.size).toBe(1);
    const [signed] = await signAll(transactions.keys());
    const meta = decodeMeta(signed!);
    expect(meta.payouts.map((p) => p.paymentIntentId)).toEqual(requests.map((r) => r.paymentIntentId));
    expect(meta.payouts.every((p) => !p.createdAta && p.createAtaIndex === null)).toBe(true);
    expect(wireBytes(signed!)).toBeLessThanOrEqual(SOLANA_TRANSACTION_BYTES_MAX);
    await land([signed!]);

    const after = await balances(recipients);
    expect(after.map((b, k) => b - before[k]!)).toEqual(requests.map((r) => r.amountMicros));
    const sum = requests.reduce((s, r) => s + r.amountMicros, 0n);
    expect(await adapter.treasuryTokenBalance('usdc')).toBe(treasuryBefore - sum);
    const transaction = await landed(signed!);
    expect(transaction.meta?.fee).toBe(5000n); // one signature for twelve payouts
    expect(transaction.meta?.computeUnitsConsumed).toBeLessThanOrEqual(BigInt(meta.computeUnitLimit));
    // Each payout's transfer sits where the meta says: a failure at that index is pinned on it.
    const { instructions, accountKeys } = transaction.transaction.message;
    for (const p of meta.payouts) expect(accountKeys[instructions[p.transferIndex]!.programIdIndex]).toBe(TOKEN_PROGRAM_ADDRESS);
    expect(await statusOf(adapter, signed!)).toEqual({ state: 'final', feeNative: 5000n });
  });

  it('pays new recipients (their token accounts created) and existing ones in one transaction', async () => {
    const existing = freshRecipients(3);
    await withTokenAccounts(existing);
    const fresh = freshRecipients(3);
    const recipients = [existing[0]!, fresh[0]!, existing[1]!, fresh[1]!, fresh[2]!, existing[2]!];
    const requests = payouts(recipients);
    const [before, treasuryBefore] = await Promise.all([balances(recipients), adapter.treasuryTokenBalance('usdc')]);

    const transactions = transactionsOf(await adapter.prepareTransfers(requests));
    expect(transactions.size).toBe(1);
    const [signed] = await signAll(transactions.keys());
    const meta = decodeMeta(signed!);
    expect(meta.payouts.map((p) => p.createdAta)).toEqual([false, true, false, true, true, false]);
    await land([signed!]);

    const after = await balances(recipients);
    expect(after.map((b, k) => b - before[k]!)).toEqual(requests.map((r) => r.amountMicros));
    expect(await adapter.treasuryTokenBalance('usdc')).toBe(treasuryBefore - requests.reduce((s, r) => s + r.amountMicros, 0n));
    // The transaction's native cost: its one fee and the rent of the three accounts it created.
    const rent = await rpc.getMinimumBalanceForRentExemption(TOKEN_ACCOUNT_BYTES).send();
    expect(await statusOf(adapter, signed!)).toEqual({ state: 'final', feeNative: 5000n + 3n * rent });
  });

  it('splits a call into several transactions, in order, none over the packet limit', async () => {
    const existing = freshRecipients(SOLANA_BATCH_TRANSFERS_MAX + 4);
    await withTokenAccounts(existing);
    const fresh = freshRecipients(SOLANA_BATCH_TRANSFERS_MAX);
    const requests = payouts([...existing, ...fresh]);
    const [before, treasuryBefore] = await Promise.all([balances([...existing, ...fresh]), adapter.treasuryTokenBalance('usdc')]);

    const transactions = transactionsOf(await adapter.prepareTransfers(requests));
    const places = [...transactions.values()];
    // Consecutive requests per transaction, every request paid once.
    expect(places.flat()).toEqual(requests.map((_, k) => k));
    for (const p of places) expect(p).toEqual(p.map((_, j) => p[0]! + j));
    expect(places[0]).toHaveLength(SOLANA_BATCH_TRANSFERS_MAX); // cut by the batch bound
    const creating = places.filter((p) => p.some((k) => k >= existing.length));
    expect(creating.length).toBeGreaterThan(1); // token account creations are bigger: cut by the packet
    expect(Math.max(...creating.map((p) => p.length))).toBeLessThan(SOLANA_BATCH_TRANSFERS_MAX);

    const signed = await signAll(transactions.keys());
    const sizes = signed.map(wireBytes);
    console.log(`solana batch split: ${requests.length} payouts -> transactions of ${places.map((p) => p.length).join(', ')} payouts, ${sizes.join(', ')} bytes`);
    for (const size of sizes) expect(size).toBeLessThanOrEqual(SOLANA_TRANSACTION_BYTES_MAX);
    expect(new Set(signed.map((s) => s.txId)).size).toBe(signed.length);
    expect(new Set(signed.map((s) => s.meta.blockhash)).size).toBe(1); // one blockhash for the call
    await land(signed);

    const after = await balances([...existing, ...fresh]);
    expect(after.map((b, k) => b - before[k]!)).toEqual(requests.map((r) => r.amountMicros));
    expect(await adapter.treasuryTokenBalance('usdc')).toBe(treasuryBefore - requests.reduce((s, r) => s + r.amountMicros, 0n));
  });
});

describe('refusals inside a batch', () => {
  it('refuses an invalid request alone; the others share one transaction', async () => {
    const [wallet] = freshRecipients(1);
    await withTokenAccounts([wallet!]);
    const [tokenAccount] = await findAssociatedTokenPda({ owner: wallet!, mint: devnet.usdcMint as Address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    const good = freshRecipients(3);
    const requests = [
      ...payouts([good[0]!]),
      ...payouts([devnet.treasuryAddress]),
      ...payouts([good[1]!]),
      ...payouts([tokenAccount]),
      ...payouts(['not-an-address']),
      ...payouts([good[2]!], () => 0n),
      ...payouts([good[2]!]),
    ];
    const answers = await adapter.prepareTransfers(requests);
    expect(answers.map((a) => (a instanceof ChainError ? a.reason : 'prepared'))).toEqual([
      'prepared',
      'invalid_destination',
      'prepared',
      'invalid_destination',
      'invalid_destination',
      'internal_error',
      'prepared',
    ]);
    const transactions = transactionsOf(answers);
    expect([...transactions.values()]).toEqual([[0, 2, 6]]);
    const [signed] = await signAll(transactions.keys());
    await land([signed!]);
    expect(await balances(good)).toEqual([requests[0]!.amountMicros, requests[2]!.amountMicros, requests[6]!.amountMicros]);
  });

  it('names the payout whose instruction failed a batch; the reason stays the instruction’s', async () => {
    const recipients = freshRecipients(3);
    await withTokenAccounts(recipients);
    const treasuryUsdc = await adapter.treasuryTokenBalance('usdc');
    const requests = payouts(recipients, (k) => (k === 1 ? treasuryUsdc + 1n : 1_000n));
    const [signed] = await signAll(transactionsOf(await adapter.prepareTransfers(requests)).keys());
    const meta = decodeMeta(signed!);

    const refused = await adapter.broadcast(signed!).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(ChainError);
    expect((refused as ChainError).reason).toBe('insufficient_funds');
    expect((refused as ChainError).details).toContain(
      `instruction ${meta.payouts[1]!.transferIndex} is payout 1 of 3 (${requests[1]!.paymentIntentId}, to ${meta.payouts[1]!.recipientAta})`,
    );

    // Landed without preflight, the failure is reported once final, with the same payout named.
    await rpc.sendTransaction(signed!.rawTx as Base64EncodedWireTransaction, { encoding: 'base64', skipPreflight: true }).send();
    devnet.advanceSlots(FINALIZE_AFTER_SLOTS);
    const status = await statusOf(adapter, signed!);
    expect(status).toMatchObject({ state: 'failed', reason: 'insufficient_funds', feeNative: 5000n });
    expect(status.state === 'failed' && status.details).toContain(`is payout 1 of 3 (${requests[1]!.paymentIntentId}`);
    expect(await balances(recipients)).toEqual([1n, 1n, 1n]); // all or nothing
  });
});

describe('fees', () => {
  it('estimates and pays one transaction fee for a batch; measured per payment against a payout of its own', async () => {
    const busy = await startBusyNode();
    const paying = adapterOn(busy.url);
    try {
      const recipients = freshRecipients(SOLANA_BATCH_TRANSFERS_MAX);
      await withTokenAccounts(recipients);
      const single = await paying.prepareTransfers(payouts(recipients.slice(0, 1)));
      const batch = await paying.prepareTransfers(payouts(recipients));
      expect(transactionsOf(batch).size).toBe(1);
      const signed = await signAll([single[0] as PreparedTransfer, batch[0] as PreparedTransfer]);
      const limits = signed.map((s) => decodeMeta(s).computeUnitLimit);
      expect(limits).toEqual([20_000, 20_000 * SOLANA_BATCH_TRANSFERS_MAX]);
      await land(signed);

      const fees = await Promise.all(signed.map(async (s) => (await landed(s)).meta!.fee));
      // 5000 lamports per signature plus the priority fee on the requested limit, as estimated.
      const expected = limits.map((limit) => 5000n + (PRIORITY_PRICE_MICRO_LAMPORTS * BigInt(limit) + 999_999n) / 1_000_000n);
      expect(fees).toEqual(expected);
      expect([(single[0] as PreparedTransfer).feeEstimate.feeNative, (batch[0] as PreparedTransfer).feeEstimate.feeNative]).toEqual(expected);
      const sizes = signed.map(wireBytes);
      console.log(
        `solana fee per payment at ${PRIORITY_PRICE_MICRO_LAMPORTS} micro-lamports/CU: single ${fees[0]} lamports (${sizes[0]} bytes); ` +
          `batch of ${SOLANA_BATCH_TRANSFERS_MAX} ${Number(fees[1]) / SOLANA_BATCH_TRANSFERS_MAX} lamports (${fees[1]} per transaction, ${sizes[1]} bytes); ` +
          `without priority fee: single 5000, batch ${5000 / SOLANA_BATCH_TRANSFERS_MAX}`,
      );
    } finally {
      await busy.close();
    }
  });
});

describe('signed meta', () => {
  const common = { blockhash: 'EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N', lastValidBlockHeight: '420', computeUnitLimit: 20_000, computeUnitPriceMicroLamports: '0' };

  it('still decodes what was signed before batches: one payout, its fields at the top', () => {
    const before = { ...common, createdAta: true, recipientAta: 'ata1', transferIndex: 1, createAtaIndex: 0 };
    const meta = decodeMeta({ txId: 'sig', rawTx: '', meta: before });
    expect(meta.payouts).toEqual([{ paymentIntentId: null, recipientAta: 'ata1', createdAta: true, transferIndex: 1, createAtaIndex: 0 }]);
    expect(encodeMeta(meta)).toEqual(before); // a payout of its own is still written so
  });

  it('lists a batch payout by payout, and refuses a malformed list', () => {
    const payouts = [
      { paymentIntentId: 'pi_a', recipientAta: 'ata1', createdAta: false, transferIndex: 0, createAtaIndex: null },
      { paymentIntentId: 'pi_b', recipientAta: 'ata2', createdAta: true, transferIndex: 2, createAtaIndex: 1 },
    ];
    const meta = { ...decodeMeta({ txId: 'sig', rawTx: '', meta: { ...common, createdAta: false, recipientAta: 'x', transferIndex: 0, createAtaIndex: null } }), payouts };
    const encoded = encodeMeta(meta);
    expect(encoded.payouts).toBe('pi_a:ata1:0:-;pi_b:ata2:2:1');
    expect(decodeMeta({ txId: 'sig', rawTx: '', meta: encoded })).toEqual(meta);
    expect(() => decodeMeta({ txId: 'sig', rawTx: '', meta: { ...encoded, payouts: 'pi_a:ata1:x:-' } })).toThrow(ChainError);
  });
});
