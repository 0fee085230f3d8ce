// Fees on OP-stack rollups (issue 35): gasUsed x effectiveGasPrice leaves out the L1 data fee (`l1Fee` in the receipt)
// and the operator fee, and both are paid from the treasury's balance. The adapter books them from the receipt and
// its estimates ask the GasPriceOracle predeploy (decision 189).
// anvil 1.7 (with `--network optimism` too) reports neither in its receipts and has no GasPriceOracle, so: the
// transfer is real (signed, sent and mined on the anvil devnet), its receipt carries the fee fields of a receipt
// recorded from OP mainnet, put in by a JSON-RPC hop in front of anvil; and the oracle is a stand-in installed at the
// predeploy's address (anvil_setCode) answering fixed fees.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { concat, createTestClient, http, numberToHex, pad, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEthereumAdapter, type EthereumAdapterOptions } from '../../src/chains/ethereum/adapter.js';
import { TYPICAL_TRANSFER_GAS } from '../../src/chains/ethereum/erc20.js';
import { GAS_PRICE_ORACLE } from '../../src/chains/ethereum/op-stack.js';
import type { ChainAdapter } from '../../src/chains/port.js';
import { createEthereumKeySigner } from '../../src/chains/signers/key.js';
import { mineBlocks, startEthereumDevnet, type EthereumDevnet } from '../../src/devnet/ethereum.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { signTransfer } from '../helpers/sign.js';

/**
 * The fee fields of an OP mainnet receipt (tx 0x2bc7cb4648e847712e39abd42178e35214a70bb15c568d604687661b9539b4c2,
 * block 0x73a43e1, an Ecotone-era WETH transfer), as its node answered eth_getTransactionReceipt.
 */
const RECORDED_OP_MAINNET = {
  gasUsed: '0x85b9',
  effectiveGasPrice: '0x3ac9e84',
  l1Fee: '0x105d4b2024',
  l1GasPrice: '0x5d749a07e',
  l1GasUsed: '0x800',
  l1BaseFeeScalar: '0x558',
  l1BlobBaseFee: '0x1',
  l1BlobBaseFeeScalar: '0xc5fc5',
} as const;
const RECORDED_GAS_FEE = 0x85b9n * 0x3ac9e84n;
const RECORDED_L1_FEE = 0x105d4b2024n;

// What the stand-in oracle answers.
const ORACLE_L1_FEE = 7_000_000_000_000n;
const ORACLE_OPERATOR_FEE = 30_000_000n;

let devnet: EthereumDevnet;
let db: TestDatabase;
let hop: ReceiptHop;

beforeAll(async () => {
  [devnet, db] = await Promise.all([startEthereumDevnet(), createTestDatabase()]);
  hop = await startReceiptHop(devnet.rpcUrl);
  await installOracle({ jovian: true });
});

/** The GasPriceOracle stand-in at the predeploy's address, answering whether its chain runs Jovian. */
async function installOracle({ jovian }: { jovian: boolean }): Promise<void> {
  const anvil = createTestClient({ mode: 'anvil', transport: http(devnet.rpcUrl) });
  await anvil.setCode({ address: GAS_PRICE_ORACLE, bytecode: oracleStandIn({ l1Fee: ORACLE_L1_FEE, operatorFee: ORACLE_OPERATOR_FEE, jovian }) });
}

afterAll(async () => {
  await hop?.close();
  await devnet?.stop();
  await db?.drop();
});

function options(feeModel: 'gas' | 'op-stack'): EthereumAdapterOptions {
  return {
    rpcUrl: hop.url,
    usdcAddress: devnet.usdcAddress,
    signer: createEthereumKeySigner(devnet.treasuryKey),
    chain: { name: 'optimism', chainId: devnet.chainId, finality: 'confirmations', confirmations: 1, feeModel, nativeCurrency: 'ETH', nativeUsdPrice: 3000, finalSeconds: 2, blockSeconds: 2 },
    rpcTimeoutSeconds: 5,
  };
}

const fresh = (): Address => privateKeyToAccount(generatePrivateKey()).address;
let sequence = 0;

/** A USDC transfer signed, sent and mined on the devnet; its final status as the adapter reads it through the hop. */
async function payAndRead(adapter: ChainAdapter) {
  const signed = await signTransfer(adapter, db.pool, { paymentIntentId: `pi_op_${++sequence}`, to: fresh(), amountMicros: 1_000_000n });
  await adapter.broadcast(signed);
  await mineBlocks(devnet.rpcUrl, 2);
  const [status] = await adapter.getStatuses([signed]);
  return status!;
}

describe('fees on an OP-stack rollup', () => {
  it("books the receipt's L1 data fee with its gas: the fee of a recorded OP mainnet receipt", async () => {
    hop.patch = RECORDED_OP_MAINNET;
    const status = await payAndRead(await createEthereumAdapter(options('op-stack')));
    expect(status).toMatchObject({ state: 'final', feeNative: RECORDED_GAS_FEE + RECORDED_L1_FEE });
  });

  it('books the operator fee an Isthmus receipt reports, by the formula of its block (Jovian, or Isthmus before it)', async () => {
    hop.patch = { ...RECORDED_OP_MAINNET, operatorFeeScalar: '0x2', operatorFeeConstant: '0x3e8' };
    const status = await payAndRead(await createEthereumAdapter(options('op-stack')));
    expect(status).toMatchObject({ state: 'final', feeNative: RECORDED_GAS_FEE + RECORDED_L1_FEE + 0x85b9n * 2n * 100n + 1000n });

    // Before Jovian (Isthmus), the scalar counts millionths of a wei a gas.
    await installOracle({ jovian: false });
    try {
      hop.patch = { ...RECORDED_OP_MAINNET, operatorFeeScalar: '0x1e8480', operatorFeeConstant: '0x3e8' };
      const isthmus = await payAndRead(await createEthereumAdapter(options('op-stack')));
      expect(isthmus).toMatchObject({ state: 'final', feeNative: RECORDED_GAS_FEE + RECORDED_L1_FEE + 0x85b9n * 2n + 1000n });
    } finally {
      await installOracle({ jovian: true });
    }
  });

  it("estimates the GasPriceOracle's L1 and operator fees on top of gas, for quotes and for each prepared transfer", async () => {
    hop.patch = null;
    const [plain, rollup] = await Promise.all([createEthereumAdapter(options('gas')), createEthereumAdapter(options('op-stack'))]);
    // No block is mined in between: the fee market is the same for both.
    const [byGas, withL1] = await Promise.all([plain.estimateFee(), rollup.estimateFee()]);
    expect(byGas.feeNative % TYPICAL_TRANSFER_GAS).toBe(0n);
    expect(withL1.feeNative - byGas.feeNative).toBe(ORACLE_L1_FEE + ORACLE_OPERATOR_FEE);
    const probe = await rollup.probe();
    expect(probe.fee!.feeNative).toBe(withL1.feeNative);
    const [prepared] = await rollup.prepareTransfers([{ paymentIntentId: 'pi_op_estimate', to: fresh(), amountMicros: 5_000_000n }]);
    expect((prepared as { feeEstimate: { feeNative: bigint } }).feeEstimate.feeNative).toBe(withL1.feeNative);
  });
});

interface ReceiptHop {
  url: string;
  /** Fields put into every receipt the node answers (null: none), as an OP-stack node reports them. */
  patch: Record<string, string> | null;
  close(): Promise<void>;
}

/** A JSON-RPC hop in front of anvil whose receipts carry `patch`'s fields; batches and single calls alike. */
async function startReceiptHop(target: string): Promise<ReceiptHop> {
  type Call = { id?: unknown; method?: string };
  type Answer = { id?: unknown; result?: unknown };
  const hop: ReceiptHop = { url: '', patch: null, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const calls = ([] as Call[]).concat(JSON.parse(body) as Call | Call[]);
      const upstream = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const answer = (await upstream.json()) as Answer | Answer[];
      for (const one of ([] as Answer[]).concat(answer)) {
        const call = calls.find((c) => c.id === one.id);
        if (call?.method === 'eth_getTransactionReceipt' && one.result && hop.patch) one.result = { ...(one.result as object), ...hop.patch };
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hop.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  hop.close = () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  return hop;
}

/**
 * Runtime code of a GasPriceOracle stand-in: `getL1Fee(bytes)` and `getOperatorFee(uint256)` answer fixed fees,
 * `isJovian()` a fixed flag, anything else reverts. Hand-assembled: no Solidity compiler in the tests.
 */
function oracleStandIn(answers: { l1Fee: bigint; operatorFee: bigint; jovian: boolean }): Hex {
  const word = (value: bigint): Hex => concat(['0x7f', pad(numberToHex(value), { size: 32 })]); // PUSH32 value
  const returnTop: Hex = '0x60005260206000f3'; // PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN
  const bodies: [Hex, Hex][] = [
    ['0x49948e0e', concat(['0x5b', word(answers.l1Fee), returnTop])], // getL1Fee(bytes)
    ['0x275aedd2', concat(['0x5b', word(answers.operatorFee), returnTop])], // getOperatorFee(uint256)
    ['0x105d0b81', concat(['0x5b', word(answers.jovian ? 1n : 0n), returnTop])], // isJovian()
  ];
  // PUSH1 0 CALLDATALOAD PUSH1 0xe0 SHR, then per selector: DUP1 PUSH4 sel EQ PUSH2 dest JUMPI; then PUSH1 0 DUP1 REVERT.
  const head = 6;
  const dispatchEach = 1 + 5 + 1 + 3 + 1;
  let dest = head + dispatchEach * bodies.length + 4;
  const dispatch: Hex[] = [];
  for (const [selector, body] of bodies) {
    dispatch.push(concat(['0x80', '0x63', selector, '0x14', '0x61', pad(numberToHex(dest), { size: 2 }), '0x57']));
    dest += (body.length - 2) / 2;
  }
  return concat(['0x600035' as Hex, '0x60e01c', ...dispatch, '0x600080fd', ...bodies.map(([, body]) => body)]);
}
