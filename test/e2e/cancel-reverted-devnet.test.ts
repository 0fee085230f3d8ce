// Cancelling a payment whose transfer reverted on chain, on anvil with the rpc Ethereum adapter: the reverted
// transaction still paid its gas, so the cancellation books that fee (the native ledger then holds what the wallet
// holds), and the USDC it never moved is released. The send times out at our node (the proxy holds it), so the payment
// waits in `retrying`; another node got the bytes, and they revert because the treasury's token balance was taken
// away (anvil_setStorageAt) between signing and mining.
import pino from 'pino';
import { createPublicClient, createTestClient, encodeAbiParameters, http, keccak256, numberToHex, parseAbi, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelPayment } from '../../src/core/operators/transitions/cancel.js';
import { reconcile } from '../../src/core/treasury/reconcile.js';
import { mineBlocks, startEthereumDevnet, type EthereumDevnet } from '../../src/devnet/ethereum.js';
import { EXECUTION_QUEUE, type ExecutionJob } from '../../src/jobs/queue.js';
import { treasuryNativeBalances } from '../../src/ledger/native-balances.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createPayment, createTestContext, ETH_ADDRESS, KEY, type TestContext } from '../helpers/context.js';
import { jsonRpc } from '../helpers/devnet-process.js';
import { startRpcProxy, type RpcProxy } from '../helpers/rpc-proxy.js';
import { drainExecution, executeAlone } from '../helpers/workers.js';
import { testAudit } from '../helpers/audit.js';

const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)']);
/** TestUSDC's storage: totalSupply in slot 0, the balanceOf mapping in slot 1 (src/devnet/TestUSDC.sol). */
const BALANCE_OF_SLOT = 1n;

let eth: EthereumDevnet;
let proxy: RpcProxy;
let t: TestContext;

beforeAll(async () => {
  eth = await startEthereumDevnet();
  proxy = await startRpcProxy(eth.rpcUrl);
  t = await createTestContext({
    ETHEREUM_ADAPTER: 'rpc',
    ETHEREUM_RPC_URL: proxy.url,
    ETHEREUM_USDC_ADDRESS: eth.usdcAddress,
    ETHEREUM_TREASURY_KEY: eth.treasuryKey,
    ETHEREUM_CONFIRMATIONS: '2',
    RPC_TIMEOUT_SECONDS: '1',
  });
}, 120_000);
afterAll(async () => {
  await t?.close();
  await proxy?.close();
  await eth?.stop();
});

const chain = () => createPublicClient({ transport: http(eth.rpcUrl) });
const read = async (id: string) => (await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json();
const bookedGas = async () => (await treasuryNativeBalances(t.db.pool)).find((b) => b.chain === 'ethereum')!.units;

/** The storage word holding the treasury's token balance, checked against balanceOf. */
async function treasuryBalanceSlot(): Promise<Hex> {
  const slot = keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [eth.treasuryAddress, BALANCE_OF_SLOT]));
  const balance = await chain().readContract({ address: eth.usdcAddress, abi: ERC20, functionName: 'balanceOf', args: [eth.treasuryAddress] });
  expect(BigInt((await chain().getStorageAt({ address: eth.usdcAddress, slot }))!)).toBe(balance);
  return slot;
}

async function setTreasuryUsdc(slot: Hex, micros: bigint): Promise<void> {
  await createTestClient({ mode: 'anvil', transport: http(eth.rpcUrl) }).setStorageAt({ address: eth.usdcAddress as Address, index: slot, value: numberToHex(micros, { size: 32 }) });
}

describe('cancelling a payment whose transfer reverted on chain', () => {
  it('books the gas the reverted transaction paid: booked gas equals the wallet, ledger verify and reconcile clean', async () => {
    const gasBefore = await t.ctx.adapters.ethereum!.treasuryNativeBalance();
    expect(await bookedGas()).toBe(gasBefore);

    // Signed, and the send times out at our node: retrying, with the signed transfer live.
    const id = await createPayment(t.app, 5, { ethereum_address: ETH_ADDRESS });
    proxy.holdMethods.add('eth_sendRawTransaction');
    try {
      const [job] = await t.boss.fetch<ExecutionJob>(EXECUTION_QUEUE, { ignoreStartAfter: true });
      await executeAlone({ ...t.ctx, log: pino({ level: 'silent' }) }, job!.data);
      await t.boss.complete(EXECUTION_QUEUE, job!.id);
    } finally {
      proxy.holdMethods.clear();
    }
    const retrying = await read(id);
    expect(retrying.status).toBe('retrying');
    expect(retrying.attempts).toMatchObject([{ status: 'signed' }]);
    const { rows } = await t.db.pool.query<{ signed_tx: Hex; tx_id: Hex }>('SELECT signed_tx, tx_id FROM payment_attempts WHERE payment_intent_id = $1', [id]);
    const [attempt] = rows;

    // Another node had the bytes. The treasury's USDC is gone when they are mined: the transfer reverts, paying gas.
    const slot = await treasuryBalanceSlot();
    const usdc = BigInt((await chain().getStorageAt({ address: eth.usdcAddress, slot }))!);
    await setTreasuryUsdc(slot, 0n);
    await jsonRpc(eth.rpcUrl, 'eth_sendRawTransaction', [attempt!.signed_tx]);
    await mineBlocks(eth.rpcUrl, 2);
    await setTreasuryUsdc(slot, usdc);
    const receipt = await chain().getTransactionReceipt({ hash: attempt!.tx_id });
    expect(receipt.status).toBe('reverted');
    const charged = receipt.gasUsed * receipt.effectiveGasPrice;
    expect(charged).toBeGreaterThan(0n);
    expect(await t.ctx.adapters.ethereum!.treasuryNativeBalance()).toBe(gasBefore - charged);

    // The operator cancels: the chain says it can never land, so the funds return, and its gas is booked.
    expect(await cancelPayment(t.ctx, id, testAudit())).toMatchObject({ status: 'cancelled', tx_id: attempt!.tx_id });
    expect(await bookedGas()).toBe(gasBefore - charged);
    expect(await bookedGas()).toBe(await t.ctx.adapters.ethereum!.treasuryNativeBalance());
    const cancelled = await read(id);
    expect(cancelled.ledger_entries.map((e: { type: string; currency: string }) => `${e.type}:${e.currency}`)).toEqual([
      'reserve:USDC',
      'debit:USDC',
      'fee:ETH',
      'release:USDC',
    ]);
    const stored = await t.db.pool.query<{ status: string; failure_reason: string; actual_fee_native: string }>(
      'SELECT status, failure_reason, actual_fee_native::text FROM payment_attempts WHERE payment_intent_id = $1',
      [id],
    );
    expect(stored.rows).toEqual([{ status: 'failed', failure_reason: 'reverted', actual_fee_native: String(charged) }]);

    // The queued retry finds a cancelled payment and sends nothing.
    await drainExecution(t);
    expect((await read(id)).status).toBe('cancelled');
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
    expect((await reconcile(t.db.pool, t.ctx.adapters)).find((r) => r.chain === 'ethereum')).toMatchObject({ status: 'ok', difference_usdc: '0' });
  });
});
