// The Solana adapter's inbound scan (decisions 123, 124) and the devnet's getSignaturesForAddress it walks, over real
// HTTP JSON-RPC on the LiteSVM devnet. No sleeps: the slot ticker is paused and each test moves the chain.
import { randomBytes } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSolanaAdapter } from '../../src/chains/solana/adapter.js';
import { generateSolanaSecretKey } from '../../src/chains/solana/keys.js';
import { createSolanaKeySigner } from '../../src/chains/signers/key.js';
import type { ChainAdapter } from '../../src/chains/port.js';
import { startSolanaDevnet, type SolanaDevnet } from '../../src/devnet/solana.js';
import { sendDevnetSolanaTransfers } from '../../src/devnet/solana-transfer.js';

const FINALIZE_AFTER_SLOTS = 4;

let devnet: SolanaDevnet;
let adapter: ChainAdapter;

beforeAll(async () => {
  devnet = await startSolanaDevnet({ finalizeAfterSlots: FINALIZE_AFTER_SLOTS });
  devnet.pause();
  adapter = createSolanaAdapter({
    rpcUrl: devnet.rpcUrl,
    usdcMint: devnet.usdcMint,
    signer: createSolanaKeySigner(devnet.treasuryKey),
    solUsdPrice: 150,
    rpcTimeoutSeconds: 5,
  });
});
afterAll(async () => {
  await devnet?.stop();
});

async function rpc(method: string, params: unknown[]): Promise<unknown> {
  const response = await fetch(devnet.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(5000),
  });
  const body = (await response.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(body.error.message);
  return body.result;
}

describe('getSignaturesForAddress on the devnet', () => {
  it('lists as a real node: newest first, before and until exclusive, an unknown before lists nothing, an unknown until no bound', async () => {
    const address = generateSolanaSecretKey().address;
    const { signatures } = await sendDevnetSolanaTransfers(devnet.rpcUrl, [{ to: address, usdcMicros: 0n, lamports: 1_000_000n, repeat: 5 }]);
    devnet.advanceSlots(1);
    const [elsewhere] = (await sendDevnetSolanaTransfers(devnet.rpcUrl, [{ to: generateSolanaSecretKey().address, usdcMicros: 0n, lamports: 1_000_000n }])).signatures;
    devnet.advanceSlots(1);
    const list = async (config: Record<string, unknown>) =>
      ((await rpc('getSignaturesForAddress', [address, { commitment: 'confirmed', ...config }])) as { signature: string }[]).map((s) => s.signature);

    // `repeat` sends copies of one transfer, each a transaction of its own.
    expect(new Set(signatures).size).toBe(5);
    const newest = [...signatures].reverse();
    expect(await list({})).toEqual(newest);
    expect(await list({ limit: 2 })).toEqual(newest.slice(0, 2));
    expect(await list({ before: newest[1] })).toEqual(newest.slice(2));
    expect(await list({ until: newest[3] })).toEqual(newest.slice(0, 3));
    expect(await list({ before: newest[0], until: newest[4], limit: 2 })).toEqual(newest.slice(1, 3));
    // Another address's transaction stands for its place in the chain's order.
    expect(await list({ before: elsewhere })).toEqual(newest);
    expect(await list({ until: elsewhere })).toEqual([]);
    const unknown = getBase58Decoder().decode(randomBytes(64));
    expect(await list({ before: unknown })).toEqual([]);
    expect(await list({ until: unknown })).toEqual(newest);
  });
});

describe('the inbound scan', () => {
  it('reads a backlog crowded into one slot, beyond a page on both addresses, every transfer, a bounded page per call', async () => {
    // Finalize what other transfers left, and start from the chain's position as a new treasury does.
    devnet.advanceSlots(FINALIZE_AFTER_SLOTS);
    let position = await adapter.inboundPosition();
    const treasury = devnet.treasuryAddress;
    // One slot: 1,000 USDC deposits (the token account's history), 1,000 SOL top-ups (the wallet's), 500 of both.
    const { signatures } = await sendDevnetSolanaTransfers(devnet.rpcUrl, [
      { to: treasury, usdcMicros: 1n, lamports: 0n, repeat: 1000 },
      { to: treasury, usdcMicros: 0n, lamports: 1000n, repeat: 1000 },
      { to: treasury, usdcMicros: 2n, lamports: 2000n, repeat: 500 },
    ]);
    devnet.advanceSlots(FINALIZE_AFTER_SLOTS);
    const expected = new Set([
      ...signatures.slice(0, 1000).map((s) => `${s}:0:1`),
      ...signatures.slice(1000, 2000).map((s) => `${s}:1:1000`),
      ...signatures.slice(2000).flatMap((s) => [`${s}:0:2`, `${s}:1:2000`]),
    ]);

    const read = new Set<string>();
    let calls = 0;
    for (let more = true; more; ) {
      const scan = await adapter.listInboundTransfers(position);
      calls += 1;
      expect(scan.transfers.length).toBeLessThanOrEqual(2 * 200);
      if (scan.more) expect(scan.position).not.toBe(position);
      position = scan.position;
      more = scan.more;
      for (const t of scan.transfers) read.add(`${t.txId}:${t.index}:${t.amountUnits}`);
      expect(calls).toBeLessThan(100);
    }
    expect(read).toEqual(expected);
    // Idle again: the position reads as an idle position always did.
    expect(JSON.parse(position)).toEqual({ wallet: expect.any(String), token: expect.any(String) });
    expect((await adapter.listInboundTransfers(position)).transfers).toEqual([]);
  });
});
