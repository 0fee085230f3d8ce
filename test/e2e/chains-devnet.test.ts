// Chains as configuration (issue 27) on real local nodes: CHAINS=ethereum,solana,base,arbitrum with base and arbitrum
// each an anvil of its own chain id, beside the Ethereum anvil and the LiteSVM Solana devnet. Quotes offer every chain
// the merchant names an address on; a payout settles on each chain, signed for that chain's id; base and arbitrum
// settle by their presets' `finalized` block tag, not by counting blocks; the books agree with all four chains. A node
// of another chain id, two chains reaching one network, or a chain dropped from CHAINS while it holds funds, stops
// start-up.
import pino from 'pino';
import { createPublicClient, http, parseAbi, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdapters } from '../../src/chains/factory.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { reconcile } from '../../src/core/treasury/reconcile.js';
import { refuseRemovedChains } from '../../src/core/treasury/treasury.js';
import { DEVNET_CHAIN_ID, mineBlocks, startEthereumDevnet, type EthereumDevnet } from '../../src/devnet/ethereum.js';
import { startSolanaDevnet, type SolanaDevnet } from '../../src/devnet/solana.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createTestContext, KEY, type TestContext } from '../helpers/context.js';
import { devnetEnv, evmChainEnv } from '../helpers/devnet.js';
import { jsonRpc } from '../helpers/devnet-cli.js';
import { runCommand } from '../helpers/process.js';
import { confirm, drainExecution } from '../helpers/workers.js';

const CHAINS = ['ethereum', 'solana', 'base', 'arbitrum'] as const;
// Local chain ids, as `stableroute devnet --chains base,arbitrum` gives them: never the real networks'.
const BASE_CHAIN_ID = 31_338;
const ARBITRUM_CHAIN_ID = 31_339;
// One recipient on every EVM chain: each chain's balance then shows that chain's payout and no other.
const EVM_RECIPIENT = '0x52908400098527886E0F7030069857D2E4169EE7' as Address;
const SOL_RECIPIENT = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)']);
/** Rounds of (move the chains, run confirmation) a payout may take; with 2 blocks to finality it needs about 3. */
const SETTLE_ROUNDS_MAX = 20;

let eth: EthereumDevnet;
let base: EthereumDevnet;
let arbitrum: EthereumDevnet;
let sol: SolanaDevnet;
let env: Record<string, string>;
let t: TestContext;

beforeAll(async () => {
  [eth, base, arbitrum, sol] = await Promise.all([
    startEthereumDevnet(),
    startEthereumDevnet({ chainId: BASE_CHAIN_ID, tagsFollowBlocks: true }),
    startEthereumDevnet({ chainId: ARBITRUM_CHAIN_ID, tagsFollowBlocks: true }),
    startSolanaDevnet({ slotMs: 50, finalizeAfterSlots: 8 }),
  ]);
  // No BASE_FINALITY or ARBITRUM_FINALITY: their presets' `finalized` rule is what is under test.
  env = devnetEnv(eth, sol, { CHAINS: CHAINS.join(','), ...evmChainEnv('base', base), ...evmChainEnv('arbitrum', arbitrum) });
  t = await createTestContext({ ...env, RPC_TIMEOUT_SECONDS: '5', EXECUTION_RETRY_DELAY_SECONDS: '1' });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await Promise.all([eth?.stop(), base?.stop(), arbitrum?.stop(), sol?.stop()]);
});

type IntentView = { status: string; selected_chain: string; attempts: { tx_id: string; status: string }[] };

async function pay(amountUsd: number, destination: Record<string, string>, key: string): Promise<string> {
  const quote = await t.app.inject({ method: 'POST', url: '/quotes', headers: KEY, payload: { amount_usd: amountUsd, destination, priority: 'fast' } });
  expect(quote.statusCode, quote.body).toBe(201);
  const res = await t.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { quote_id: quote.json().quote_id, idempotency_key: key } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().payment_intent_id;
}

const read = async (id: string): Promise<IntentView> => (await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json();
const usdcOf = (node: EthereumDevnet, owner: Address) =>
  createPublicClient({ transport: http(node.rpcUrl) }).readContract({ address: node.usdcAddress, abi: ERC20, functionName: 'balanceOf', args: [owner] });
const blockNumberOf = async (node: EthereumDevnet, tag: 'finalized' | 'safe' | 'latest') =>
  BigInt((await jsonRpc<{ number: Hex }>(node.rpcUrl, 'eth_getBlockByNumber', [tag, false])).number);

describe('CHAINS=ethereum,solana,base,arbitrum on local nodes', () => {
  it('the devnet nodes report their own chain ids; the `finalized` and `safe` tags of base and arbitrum trail the latest block by 2 and 1', async () => {
    expect(Number(await jsonRpc<Hex>(eth.rpcUrl, 'eth_chainId'))).toBe(DEVNET_CHAIN_ID);
    expect(Number(await jsonRpc<Hex>(base.rpcUrl, 'eth_chainId'))).toBe(BASE_CHAIN_ID);
    expect(Number(await jsonRpc<Hex>(arbitrum.rpcUrl, 'eth_chainId'))).toBe(ARBITRUM_CHAIN_ID);
    for (const node of [base, arbitrum]) {
      // Past the first blocks, where anvil's own epoch of 32 slots would tag block 0 as well.
      await mineBlocks(node.rpcUrl, 3);
      const latest = await blockNumberOf(node, 'latest');
      expect(latest).toBeGreaterThanOrEqual(5n); // USDC deployed, minted, then the 3 blocks
      expect(await blockNumberOf(node, 'finalized')).toBe(latest - 2n);
      expect(await blockNumberOf(node, 'safe')).toBe(latest - 1n);
    }
  });

  it('quotes every configured chain the merchant names an address on', async () => {
    const destination = { ethereum_address: EVM_RECIPIENT, solana_address: SOL_RECIPIENT, base_address: EVM_RECIPIENT, arbitrum_address: EVM_RECIPIENT };
    const quote = await t.app.inject({ method: 'POST', url: '/quotes', headers: KEY, payload: { amount_usd: 10, destination, priority: 'fast' } });
    expect(quote.statusCode, quote.body).toBe(201);
    const chains = (quote.json().candidate_routes as { chain: string }[]).map((route) => route.chain);
    expect(chains.sort()).toEqual([...CHAINS].sort());
  });

  it('a payout settles on each chain, signed for its chain id; base and arbitrum settle once the finalized tag covers them', async () => {
    const evm = { ethereum: eth, base, arbitrum } as const;
    const amounts = { ethereum: 1_111_111n, base: 2_222_222n, arbitrum: 3_333_333n, solana: 4_444_444n } as const;
    const before = Object.fromEntries(await Promise.all(Object.entries(evm).map(async ([chain, node]) => [chain, await usdcOf(node, EVM_RECIPIENT)])));
    const ids: Record<string, string> = {};
    for (const chain of CHAINS) {
      const address = chain === 'solana' ? SOL_RECIPIENT : EVM_RECIPIENT;
      ids[chain] = await pay(Number(amounts[chain]) / 1e6, { [`${chain}_address`]: address }, `chains-${chain}`);
    }
    await drainExecution(t);

    // Where each rollup transfer landed, and what a round makes of it while the tag is still below that block.
    const landed: Record<string, bigint> = {};
    for (const chain of ['base', 'arbitrum'] as const) {
      const intent = await read(ids[chain]!);
      expect(intent.attempts, JSON.stringify(intent)).toHaveLength(1);
      const receipt = await jsonRpc<{ blockNumber: Hex; status: Hex }>(evm[chain].rpcUrl, 'eth_getTransactionReceipt', [intent.attempts[0]!.tx_id]);
      expect(receipt.status).toBe('0x1');
      landed[chain] = BigInt(receipt.blockNumber);
    }
    const waitedForTag: Record<string, boolean> = { base: false, arbitrum: false };
    for (let round = 0; ; round++) {
      expect(round, 'every payout settled within the rounds allowed').toBeLessThan(SETTLE_ROUNDS_MAX);
      const finalized = { base: await blockNumberOf(base, 'finalized'), arbitrum: await blockNumberOf(arbitrum, 'finalized') };
      await confirm(t);
      const intents = Object.fromEntries(await Promise.all(CHAINS.map(async (chain) => [chain, await read(ids[chain]!)] as const)));
      for (const chain of ['base', 'arbitrum'] as const) {
        // Settled exactly when the tag reaches the block: the preset's one confirmation alone would have settled it at once.
        expect(intents[chain]!.status === 'settled', `${chain} round ${round}: finalized ${finalized[chain]}, landed ${landed[chain]}`).toBe(
          finalized[chain] >= landed[chain]!,
        );
        if (finalized[chain] < landed[chain]!) waitedForTag[chain] = true;
      }
      if (CHAINS.every((chain) => intents[chain]!.status === 'settled')) break;
      for (const chain of CHAINS) expect(['broadcasted', 'pending_confirmation', 'settled'], JSON.stringify(intents[chain])).toContain(intents[chain]!.status);
      await Promise.all([mineBlocks(eth.rpcUrl, 1), mineBlocks(base.rpcUrl, 1), mineBlocks(arbitrum.rpcUrl, 1)]);
      sol.advanceSlots(4);
    }
    expect(waitedForTag).toEqual({ base: true, arbitrum: true });

    for (const chain of CHAINS) {
      const intent = await read(ids[chain]!);
      expect(intent.selected_chain).toBe(chain);
      expect(intent.attempts.map((a) => a.status)).toEqual(['confirmed']);
    }
    for (const [chain, node] of Object.entries(evm)) {
      const tx = await jsonRpc<{ chainId: Hex } | null>(node.rpcUrl, 'eth_getTransactionByHash', [(await read(ids[chain]!)).attempts[0]!.tx_id]);
      expect(Number(tx?.chainId), `${chain} transaction's chain id`).toBe(node.chainId);
      expect((await usdcOf(node, EVM_RECIPIENT)) - before[chain]!, `${chain} recipient`).toBe(amounts[chain as keyof typeof evm]);
    }
    const solTx = await jsonRpc<{ meta: { err: unknown; postTokenBalances: { owner: string; uiTokenAmount: { amount: string } }[] } }>(sol.rpcUrl, 'getTransaction', [
      (await read(ids.solana!)).attempts[0]!.tx_id,
      { encoding: 'json', commitment: 'finalized', maxSupportedTransactionVersion: 0 },
    ]);
    expect(solTx.meta.err).toBeNull();
    expect(solTx.meta.postTokenBalances.find((b) => b.owner === SOL_RECIPIENT)?.uiTokenAmount.amount).toBe(String(amounts.solana));
  });

  it('the ledger verifies and every chain reconciles to zero difference', async () => {
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
    const report = await reconcile(t.db.pool, t.ctx.adapters);
    expect(report.map((row) => row.chain).sort()).toEqual([...CHAINS].sort());
    for (const row of report) {
      expect(row.status, JSON.stringify(row)).toBe('ok');
      expect(row.difference_usdc).toBe('0');
    }
  });

  it('a node of another chain id than BASE_CHAIN_ID (or, unset, the base preset 8453) refuses start-up', async () => {
    const quiet = pino({ level: 'silent' });
    for (const setting of [{ BASE_CHAIN_ID: String(ARBITRUM_CHAIN_ID) }, { BASE_CHAIN_ID: '' }]) {
      const config = loadConfig({ NODE_ENV: 'test', ...env, ...setting, DATABASE_URL: t.db.url });
      expect(config.chains.base!.chainId).toBe(setting.BASE_CHAIN_ID === '' ? 8453 : ARBITRUM_CHAIN_ID);
      const refused = await createAdapters(config, t.db.pool, t.clock, quiet).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(ConfigError);
      expect(refused).toMatchObject({ variable: 'BASE_CHAIN_ID' });
      expect((refused as Error).message).toContain(`chain ${BASE_CHAIN_ID}`);
    }
  });

  it('two chains reaching one network (its chain id, and the same treasury or USDC) refuse start-up naming both, in code and in `stableroute serve`', async () => {
    const quiet = pino({ level: 'silent' });
    // arbitrum pointed at base's node, with base's chain id: the same treasury key and token, one wallet under two names.
    const twice = { ARBITRUM_RPC_URL: base.rpcUrl, ARBITRUM_CHAIN_ID: String(BASE_CHAIN_ID) };
    const refused = await createAdapters(loadConfig({ NODE_ENV: 'test', ...env, ...twice, DATABASE_URL: t.db.url }), t.db.pool, t.clock, quiet).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ConfigError);
    expect(refused).toMatchObject({ variable: 'CHAINS' });
    expect((refused as Error).message).toMatch(/base and arbitrum reach the same network \(chain id 31338, the same treasury 0x[0-9a-fA-F]{40}\)/);

    // Another treasury on that network, but the same USDC contract: refused too.
    const otherTreasury = { ...twice, ARBITRUM_TREASURY_KEY: '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a' };
    const sameToken = await createAdapters(loadConfig({ NODE_ENV: 'test', ...env, ...otherTreasury, DATABASE_URL: t.db.url }), t.db.pool, t.clock, quiet).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect((sameToken as Error).message).toContain(`base and arbitrum reach the same network (chain id 31338, the same USDC contract ${base.usdcAddress})`);

    const serve = await runCommand(['serve'], { ...env, ...twice, DATABASE_URL: t.db.url, PORT: '0', HOST: '127.0.0.1' });
    expect(serve.code, serve.stdout + serve.stderr).toBe(1);
    expect(serve.stderr).toContain('CHAINS: base and arbitrum reach the same network');
  }, 30_000);

  it('a chain dropped from CHAINS while it holds funds refuses start-up, in code and in `stableroute serve`', async () => {
    await expect(refuseRemovedChains(t.db.pool, CHAINS)).resolves.toEqual([]);
    const refused = await refuseRemovedChains(t.db.pool, ['ethereum', 'solana', 'arbitrum']).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ConfigError);
    expect(refused).toMatchObject({ variable: 'CHAINS' });
    expect((refused as Error).message).toContain('base is not listed');

    const serve = await runCommand(['serve'], { ...devnetEnv(eth, sol), CHAINS: 'ethereum,solana', DATABASE_URL: t.db.url, PORT: '0', HOST: '127.0.0.1' });
    expect(serve.code, serve.stdout + serve.stderr).toBe(1);
    expect(serve.stderr).toContain('CHAINS');
    expect(serve.stderr).toMatch(/(base|arbitrum) is not listed \(CHAINS=ethereum,solana\)/);
  }, 30_000);
});
