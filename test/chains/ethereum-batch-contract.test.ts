// The batch-transfer contract (src/devnet/BatchTransfer.sol, issue 28) on a real anvil node with the devnet's USDC:
// one standing approval, all-or-nothing batches, nobody but the treasury spending the treasury's allowance; and the
// gas per payment, printed for docs/performance.md. No sleeps: anvil automines and each receipt has a deadline.
import {
  createPublicClient,
  createWalletClient,
  http,
  maxUint256,
  parseEventLogs,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_CONTRACT_ABI } from '../../src/chains/ethereum/batch-contract.js';
import { blacklistEthereumAddress } from '../../src/devnet/ethereum-blacklist.js';
import { startEthereumDevnet, type EthereumDevnet } from '../../src/devnet/ethereum.js';
import { TEST_USDC_ABI } from '../../src/devnet/usdc-token.js';

const USDC_MICROS = 1_000_000n;
const RECEIPT_TIMEOUT_MS = 30_000;
const RECEIPT_POLL_MS = 20;
// Enough for any batch here, so that a batch meant to revert is mined (and reverts) instead of failing estimation.
const REVERTING_BATCH_GAS = 1_000_000n;
const GAS_FOR_A_THIRD_PARTY_WEI = 10n ** 18n;

let devnet: EthereumDevnet;
let reader: ReturnType<typeof createPublicClient>;
let treasury: PrivateKeyAccount;

beforeAll(async () => {
  devnet = await startEthereumDevnet();
  reader = createPublicClient({ transport: http(devnet.rpcUrl), cacheTime: 0 });
  treasury = privateKeyToAccount(devnet.treasuryKey);
  // The one approval: every batch below spends it, none renews it.
  await mined(
    await walletOf(treasury).writeContract({ address: devnet.usdcAddress, abi: TEST_USDC_ABI, functionName: 'approve', args: [devnet.batchContractAddress, maxUint256], chain: null }),
  );
});

afterAll(async () => {
  await devnet?.stop();
});

function walletOf(account: PrivateKeyAccount) {
  return createWalletClient({ account, transport: http(devnet.rpcUrl) });
}

async function mined(hash: Hex): Promise<TransactionReceipt> {
  return reader.waitForTransactionReceipt({ hash, pollingInterval: RECEIPT_POLL_MS, timeout: RECEIPT_TIMEOUT_MS });
}

function freshAddresses(count: number): Address[] {
  return Array.from({ length: count }, () => privateKeyToAccount(generatePrivateKey()).address);
}

async function balanceOf(address: Address): Promise<bigint> {
  return reader.readContract({ address: devnet.usdcAddress, abi: TEST_USDC_ABI, functionName: 'balanceOf', args: [address] });
}

async function balancesOf(addresses: Address[]): Promise<bigint[]> {
  return Promise.all(addresses.map(balanceOf));
}

/** Sends a batch and returns its receipt, whatever its status; `gas` skips estimation, so a reverting batch is mined. */
async function sendBatch(recipients: Address[], amounts: bigint[], options: { from?: PrivateKeyAccount; gas?: bigint } = {}): Promise<TransactionReceipt> {
  const hash = await walletOf(options.from ?? treasury).writeContract({
    address: devnet.batchContractAddress,
    abi: BATCH_CONTRACT_ABI,
    functionName: 'batchTransfer',
    args: [devnet.usdcAddress, recipients, amounts],
    gas: options.gas,
    chain: null,
  });
  return mined(hash);
}

/** The batch as an eth_call from `from`: rejects with the revert reason the transaction would have. */
function simulateBatch(from: Address, recipients: Address[], amounts: bigint[], token: Address = devnet.usdcAddress) {
  return reader.simulateContract({
    account: from,
    address: devnet.batchContractAddress,
    abi: BATCH_CONTRACT_ABI,
    functionName: 'batchTransfer',
    args: [token, recipients, amounts],
  });
}

describe('batch-transfer contract', () => {
  it('pays 50 recipients exactly in one transaction, from one standing approval', async () => {
    const recipients = freshAddresses(50);
    const amounts = recipients.map((_, i) => BigInt(i + 1) * USDC_MICROS + BigInt(i));
    const total = amounts.reduce((sum, amount) => sum + amount, 0n);
    const treasuryBefore = await balanceOf(treasury.address);
    expect(await balancesOf(recipients)).toEqual(recipients.map(() => 0n));

    const receipt = await sendBatch(recipients, amounts);

    expect(receipt.status).toBe('success');
    expect(await balancesOf(recipients)).toEqual(amounts);
    expect(await balanceOf(treasury.address)).toBe(treasuryBefore - total);
    expect(await balanceOf(devnet.batchContractAddress)).toBe(0n);
    const transfers = parseEventLogs({ abi: TEST_USDC_ABI, eventName: 'Transfer', logs: receipt.logs });
    expect(transfers[0]!.args).toEqual({ from: treasury.address, to: devnet.batchContractAddress, value: total });
    const payouts = transfers.filter((log) => log.args.from === devnet.batchContractAddress);
    expect(payouts.map((log) => [log.args.to, log.args.value])).toEqual(recipients.map((to, i) => [to, amounts[i]]));
    // The devnet token, like OpenZeppelin's, never spends an infinite allowance: the one approval stands.
    expect(await reader.readContract({ address: devnet.usdcAddress, abi: TEST_USDC_ABI, functionName: 'allowance', args: [treasury.address, devnet.batchContractAddress] })).toBe(maxUint256);
  });

  it('reverts the whole batch when one recipient is blacklisted, with the token reason', async () => {
    const recipients = freshAddresses(5);
    const amounts = recipients.map(() => 3n * USDC_MICROS);
    await blacklistEthereumAddress(devnet, recipients[2]!);
    const treasuryBefore = await balanceOf(treasury.address);

    await expect(simulateBatch(treasury.address, recipients, amounts)).rejects.toThrow('Blacklistable: account is blacklisted');
    const receipt = await sendBatch(recipients, amounts, { gas: REVERTING_BATCH_GAS });

    expect(receipt.status).toBe('reverted');
    expect(receipt.logs).toEqual([]);
    expect(await balancesOf(recipients)).toEqual(recipients.map(() => 0n));
    expect(await balanceOf(treasury.address)).toBe(treasuryBefore);
    expect(await balanceOf(devnet.batchContractAddress)).toBe(0n);
  });

  it("lets a third party spend only its own funds, never the treasury's standing allowance", async () => {
    const stranger = privateKeyToAccount(generatePrivateKey());
    await devnet.fund(stranger.address, { usdcMicros: 5n * USDC_MICROS, wei: GAS_FOR_A_THIRD_PARTY_WEI });
    const [recipient] = freshAddresses(1) as [Address];
    const treasuryBefore = await balanceOf(treasury.address);

    // Without an approval of its own, the stranger's call cannot pull anything, though the treasury's stands.
    await expect(simulateBatch(stranger.address, [recipient], [USDC_MICROS])).rejects.toThrow('TestUSDC: insufficient allowance');
    const unapproved = await sendBatch([recipient], [USDC_MICROS], { from: stranger, gas: REVERTING_BATCH_GAS });
    expect(unapproved.status).toBe('reverted');
    // Approved, it pays from its own balance, and no further than that balance.
    await mined(await walletOf(stranger).writeContract({ address: devnet.usdcAddress, abi: TEST_USDC_ABI, functionName: 'approve', args: [devnet.batchContractAddress, maxUint256], chain: null }));
    await expect(simulateBatch(stranger.address, [recipient], [6n * USDC_MICROS])).rejects.toThrow('TestUSDC: transfer amount exceeds balance');
    expect((await sendBatch([recipient], [5n * USDC_MICROS], { from: stranger })).status).toBe('success');

    expect(await balanceOf(stranger.address)).toBe(0n);
    expect(await balanceOf(recipient)).toBe(5n * USDC_MICROS);
    expect(await balanceOf(treasury.address)).toBe(treasuryBefore);
  });

  it('refuses mismatched lengths, an empty batch, one over the cap and a token without code', async () => {
    const [a, b] = freshAddresses(2) as [Address, Address];
    await expect(simulateBatch(treasury.address, [a, b], [USDC_MICROS])).rejects.toThrow('BatchTransfer: recipients and amounts differ in length');
    await expect(simulateBatch(treasury.address, [a], [USDC_MICROS, USDC_MICROS])).rejects.toThrow('BatchTransfer: recipients and amounts differ in length');
    await expect(simulateBatch(treasury.address, [], [])).rejects.toThrow('BatchTransfer: no recipients');
    const max = await reader.readContract({ address: devnet.batchContractAddress, abi: BATCH_CONTRACT_ABI, functionName: 'MAX_RECIPIENTS' });
    const tooMany = Array.from({ length: Number(max) + 1 }, () => a);
    await expect(simulateBatch(treasury.address, tooMany, tooMany.map(() => 1n))).rejects.toThrow('BatchTransfer: more than MAX_RECIPIENTS');
    await expect(simulateBatch(treasury.address, [a], [USDC_MICROS], b)).rejects.toThrow('BatchTransfer: token is not a contract');
    const treasuryBefore = await balanceOf(treasury.address);
    expect((await sendBatch([a, b], [USDC_MICROS], { gas: REVERTING_BATCH_GAS })).status).toBe('reverted');
    expect(await balanceOf(treasury.address)).toBe(treasuryBefore);
  });

  it('costs less gas per payment in a batch than alone, less the bigger the batch (figures printed for docs/performance.md)', async () => {
    const rows: { what: string; payments: number; gasPerPayment: bigint }[] = [];
    const single = async (to: Address) => {
      const hash = await walletOf(treasury).writeContract({ address: devnet.usdcAddress, abi: TEST_USDC_ABI, functionName: 'transfer', args: [to, USDC_MICROS], chain: null });
      const receipt = await mined(hash);
      expect(receipt.status).toBe('success');
      return receipt.gasUsed;
    };
    const [holder] = freshAddresses(1) as [Address];
    const singleNew = await single(holder);
    const singleExisting = await single(holder);
    rows.push({ what: 'transfer, new holder', payments: 1, gasPerPayment: singleNew });
    rows.push({ what: 'transfer, existing holder', payments: 1, gasPerPayment: singleExisting });
    for (const size of [10, 50, 100]) {
      const recipients = freshAddresses(size);
      const amounts = recipients.map(() => USDC_MICROS);
      // The same recipients twice: new holders the first time, existing ones the second.
      for (const what of ['batch, new holders', 'batch, existing holders']) {
        const receipt = await sendBatch(recipients, amounts);
        expect(receipt.status).toBe('success');
        rows.push({ what, payments: size, gasPerPayment: receipt.gasUsed / BigInt(size) });
      }
    }
    const lines = rows.map(({ what, payments, gasPerPayment }) => {
      const single = what.includes('new') ? singleNew : singleExisting;
      const ratio = Number((gasPerPayment * 1000n) / single) / 1000;
      return `${what.padEnd(26)} ${String(payments).padStart(4)} payments  ${String(gasPerPayment).padStart(7)} gas/payment  ${ratio.toFixed(3)} x single`;
    });
    console.log(`gas per payment on the devnet (anvil, TestUSDC):\n${lines.join('\n')}`);
    // Gas is the protocol's, not the machine's: these hold on any host. Inside one transaction each further payment
    // saves the base cost and the cold accesses of the token and the treasury's balance.
    for (const what of ['batch, new holders', 'batch, existing holders']) {
      const single = what.includes('new') ? singleNew : singleExisting;
      const perPayment = rows.filter((r) => r.what === what).map((r) => r.gasPerPayment);
      expect(perPayment.every((gas) => gas < single), what).toBe(true);
      expect([...perPayment].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)), what).toEqual(perPayment);
    }
    // The target for existing holders, met from 50 payments a batch on.
    expect(rows.find((r) => r.what === 'batch, existing holders' && r.payments === 50)!.gasPerPayment * 100n).toBeLessThanOrEqual(singleExisting * 35n);
  });
});
