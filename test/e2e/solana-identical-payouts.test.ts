// Two identical Solana payouts (same recipient, amount, blockhash and fee) are two transactions (decision 39): the SPL
// memo each carries names its payment, so their signatures differ. Through the service on the LiteSVM devnet, both go
// out on the first try and settle; through the adapter, with the key signer and with a PKCS#11 token, both land and
// stay within the compute budget they ask for, with or without creating the recipient's token account.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Address } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainAdapter, TransferRequest } from '../../src/chains/port.js';
import { createSolanaAdapter } from '../../src/chains/solana/adapter.js';
import { COMPUTE_UNITS_TRANSFER, COMPUTE_UNITS_TRANSFER_AND_CREATE_ACCOUNT } from '../../src/chains/solana/fees.js';
import { generateSolanaSecretKey } from '../../src/chains/solana/keys.js';
import { createSolanaKeySigner } from '../../src/chains/signers/key.js';
import { openPkcs11SolanaSigner } from '../../src/chains/signers/pkcs11/solana.js';
import type { SolanaSigner } from '../../src/chains/signers/port.js';
import { withTransaction } from '../../src/db/pool.js';
import { createSoftHsmToken } from '../../src/devnet/softhsm.js';
import { startSolanaDevnet, type SolanaDevnet } from '../../src/devnet/solana.js';
import { createPayment, createTestContext, KEY, type TestContext } from '../helpers/context.js';
import { signTransfer } from '../helpers/sign.js';
import { confirm, drainExecution } from '../helpers/workers.js';
import { statusOf } from '../helpers/status.js';

const FINALIZE_AFTER_SLOTS = 8;

let sol: SolanaDevnet;
let t: TestContext;
let scratch: string;

beforeAll(async () => {
  sol = await startSolanaDevnet({ slotMs: 50, finalizeAfterSlots: FINALIZE_AFTER_SLOTS });
  // Slots move only when a test moves them: every payout of a step is built on the same blockhash.
  sol.pause();
  t = await createTestContext({ SOLANA_ADAPTER: 'rpc', SOLANA_RPC_URL: sol.rpcUrl, SOLANA_USDC_MINT: sol.usdcMint, SOLANA_TREASURY_KEY: sol.treasuryKey });
  scratch = await mkdtemp(join(tmpdir(), 'stableroute-identical-'));
}, 120_000);
afterAll(async () => {
  await t?.close();
  await sol?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

interface TransactionJson {
  meta: { err: unknown; logMessages: string[]; computeUnitsConsumed: number };
}

async function transaction(signature: string): Promise<TransactionJson> {
  const response = await fetch(sol.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getTransaction', params: [signature, { encoding: 'json', maxSupportedTransactionVersion: 0 }] }),
  });
  return ((await response.json()) as { result: TransactionJson }).result;
}

async function usdcOf(owner: string): Promise<bigint> {
  const [ata] = await findAssociatedTokenPda({ owner: owner as Address, mint: sol.usdcMint as Address, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const response = await fetch(sol.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getTokenAccountBalance', params: [ata] }),
  });
  const body = (await response.json()) as { result?: { value: { amount: string } } };
  return BigInt(body.result?.value.amount ?? '0');
}

describe('two identical Solana payouts', () => {
  it('through the service: both go out on the first try, with their own signatures, and both settle', async () => {
    // A recipient with a token account already: otherwise the second payout, prepared after the first landed, would
    // differ from it by not creating one.
    const recipient = generateSolanaSecretKey().address;
    await sol.fund(recipient, { usdcMicros: 1n, lamports: 0n });
    const ids = [await createPayment(t.app, 7, { solana_address: recipient }), await createPayment(t.app, 7, { solana_address: recipient })];
    await drainExecution(t);
    const { rows } = await t.db.pool.query<{ payment_intent_id: string; tx_id: string }>(
      'SELECT payment_intent_id, tx_id FROM payment_attempts WHERE payment_intent_id = ANY($1) ORDER BY created_at',
      [ids],
    );
    expect(rows.map((r) => r.payment_intent_id).sort()).toEqual([...ids].sort());
    expect(new Set(rows.map((r) => r.tx_id)).size).toBe(2);
    for (const id of ids) {
      const intent = (await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json();
      expect(intent.status, JSON.stringify(intent)).toBe('broadcasted');
    }
    for (let i = 0; i < 20; i++) {
      sol.advanceSlots(4);
      await confirm(t);
    }
    for (const id of ids) expect((await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json().status).toBe('settled');
    expect(await usdcOf(recipient)).toBe(14_000_001n);
    // Each transaction's memo names its payment.
    for (const row of rows) expect((await transaction(row.tx_id)).meta.logMessages.join('\n')).toContain(row.payment_intent_id);
  });

  const signers: [string, () => Promise<SolanaSigner>][] = [
    ['the key signer', async () => createSolanaKeySigner(generateSolanaSecretKey().secretKey)],
    [
      'a PKCS#11 token',
      async () => {
        // Sets this process's SOFTHSM2_CONF to the new token's; fails (never skips) without SoftHSM2.
        const token = await createSoftHsmToken(join(scratch, 'softhsm'));
        const pin = (await readFile(token.pinFile, 'utf8')).trim();
        return openPkcs11SolanaSigner({ modulePath: token.module, tokenLabel: token.tokenLabel, pin, timeoutSeconds: 5, keyLabel: token.solanaKeyLabel });
      },
    ],
  ];
  for (const [name, open] of signers) {
    it(`through the adapter, signed by ${name}: two transactions that land, within their compute budget`, async () => {
      const signer = await open();
      await sol.fund(signer.address, { usdcMicros: 100_000_000n, lamports: 1_000_000_000n });
      const adapter: ChainAdapter = createSolanaAdapter({ rpcUrl: sol.rpcUrl, usdcMint: sol.usdcMint, signer, solUsdPrice: 150, rpcTimeoutSeconds: 5 });
      try {
        const recipient = generateSolanaSecretKey().address;
        const request = (id: string): TransferRequest => ({ paymentIntentId: id, to: recipient, amountMicros: 3_000_000n });
        // A new recipient (its token account created by the first to land) and then one that has it.
        for (const round of ['create', 'existing']) {
          const requests = [request(`pi_${round}first00000`), request(`pi_${round}second0000`)];
          const signed = await withTransaction(t.db.pool, async (tx) => [await signTransfer(adapter, tx, requests[0]!), await signTransfer(adapter, tx, requests[1]!)]);
          expect(signed[0]!.meta.blockhash).toBe(signed[1]!.meta.blockhash);
          expect(signed[0]!.txId).not.toBe(signed[1]!.txId);
          for (const s of signed) await adapter.broadcast(s);
          sol.advanceSlots(FINALIZE_AFTER_SLOTS);
          for (const [i, s] of signed.entries()) {
            expect((await statusOf(adapter, s)).state).toBe('final');
            const landed = await transaction(s.txId);
            expect(landed.meta.err).toBeNull();
            expect(landed.meta.logMessages.join('\n')).toContain(requests[i]!.paymentIntentId);
            const limit = s.meta.createdAta ? COMPUTE_UNITS_TRANSFER_AND_CREATE_ACCOUNT : COMPUTE_UNITS_TRANSFER;
            expect(landed.meta.computeUnitsConsumed).toBeLessThanOrEqual(limit);
          }
        }
        expect(await usdcOf(recipient)).toBe(12_000_000n);
      } finally {
        await adapter.close?.();
      }
    });
  }
});
