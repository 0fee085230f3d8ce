// The devnet's USDT and PYUSD stand-ins (issue 40, src/devnet/TestUSDT.sol and TestPYUSD.sol) on a real anvil node,
// paid through the real batch-transfer contract: Tether's ERC-20 returns nothing and blacklists senders only, Paxos'
// returns true and freezes both ends. No sleeps: anvil automines and each receipt has a deadline.
import {
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  http,
  maxUint256,
  parseEventLogs,
  type Abi,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_CONTRACT_ABI } from '../../src/chains/ethereum/batch-contract.js';
import { ERC20_ABI, TYPICAL_TRANSFER_GAS } from '../../src/chains/ethereum/erc20.js';
import { approveBatchContract } from '../../src/devnet/ethereum-approve.js';
import { blacklistEthereumAddress } from '../../src/devnet/ethereum-blacklist.js';
import { sendDevnetEthereumTransfer } from '../../src/devnet/ethereum-transfer.js';
import { startEthereumDevnet, type EthereumDevnet } from '../../src/devnet/ethereum.js';
import { TEST_PYUSD_ABI } from '../../src/devnet/pyusd-token.js';
import { TEST_USDT_ABI } from '../../src/devnet/usdt-token.js';

const MICROS = 1_000_000n;
const TREASURY_MICROS = 1_000_000n * MICROS;
const RECEIPT_TIMEOUT_MS = 30_000;
const RECEIPT_POLL_MS = 20;
// Enough for any batch here, so that a batch meant to revert is mined (and reverts) instead of failing estimation.
const REVERTING_GAS = 1_000_000n;
const GAS_WEI = 10n ** 18n;

let devnet: EthereumDevnet;
let reader: ReturnType<typeof createPublicClient>;
let treasury: PrivateKeyAccount;

beforeAll(async () => {
  devnet = await startEthereumDevnet();
  reader = createPublicClient({ transport: http(devnet.rpcUrl), cacheTime: 0 });
  treasury = privateKeyToAccount(devnet.treasuryKey);
  // What `stableroute devnet` does for the treasury key it hands out: one standing approval per token.
  await approveBatchContract(devnet, devnet.treasuryKey);
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

function balanceOf(token: Address, owner: Address): Promise<bigint> {
  return reader.readContract({ address: token, abi: ERC20_ABI, functionName: 'balanceOf', args: [owner] });
}

function balancesOf(token: Address, owners: Address[]): Promise<bigint[]> {
  return Promise.all(owners.map((owner) => balanceOf(token, owner)));
}

async function sendBatch(token: Address, recipients: Address[], amounts: bigint[], options: { from?: PrivateKeyAccount; gas?: bigint } = {}) {
  const hash = await walletOf(options.from ?? treasury).writeContract({
    address: devnet.batchContractAddress,
    abi: BATCH_CONTRACT_ABI,
    functionName: 'batchTransfer',
    args: [token, recipients, amounts],
    gas: options.gas,
    chain: null,
  });
  return mined(hash);
}

/** The batch as an eth_call from `from`; rejects with the revert the transaction would have, decoded with `errors`. */
function simulateBatch(from: Address, token: Address, recipients: Address[], amounts: bigint[], errors: Abi = []) {
  return reader.simulateContract({
    account: from,
    address: devnet.batchContractAddress,
    abi: [...BATCH_CONTRACT_ABI, ...errors],
    functionName: 'batchTransfer',
    args: [token, recipients, amounts],
  });
}

/** A third party with its own USDT (or PYUSD) and gas, and the batch contract approved for it. */
async function stranger(token: 'usdt' | 'pyusd', micros: bigint): Promise<PrivateKeyAccount> {
  const account = privateKeyToAccount(generatePrivateKey());
  await devnet.fund(account.address, { usdcMicros: 0n, [`${token}Micros`]: micros, wei: GAS_WEI });
  const address = token === 'usdt' ? devnet.usdtAddress : devnet.pyusdAddress;
  const abi = token === 'usdt' ? TEST_USDT_ABI : TEST_PYUSD_ABI;
  await mined(await walletOf(account).writeContract({ address, abi, functionName: 'approve', args: [devnet.batchContractAddress, maxUint256], chain: null }));
  return account;
}

describe('the devnet tokens', () => {
  it("deploys USDT and PYUSD beside USDC, 1,000,000 of each in the treasury, each answering the adapter's ERC-20 reads", async () => {
    const tokens = { USDC: devnet.usdcAddress, USDT: devnet.usdtAddress, PYUSD: devnet.pyusdAddress };
    expect(new Set(Object.values(tokens)).size).toBe(3);
    for (const [symbol, address] of Object.entries(tokens)) {
      // The adapter reads decimals as a uint8: Tether's is a uint256, which decodes the same.
      expect(await reader.readContract({ address, abi: ERC20_ABI, functionName: 'decimals' }), symbol).toBe(6);
      expect(await reader.readContract({ address, abi: TEST_PYUSD_ABI, functionName: 'symbol' })).toBe(symbol);
      expect(await balanceOf(address, treasury.address), symbol).toBe(TREASURY_MICROS);
    }
  });
});

describe('gas', () => {
  it("costs each token's single transfer no more than the adapter assumes (figures printed; the stand-ins are leaner than mainnet's)", async () => {
    const lines: string[] = [];
    for (const [symbol, token] of [['USDC', devnet.usdcAddress], ['USDT', devnet.usdtAddress], ['PYUSD', devnet.pyusdAddress]] as const) {
      const [holder] = freshAddresses(1) as [Address];
      const gas: bigint[] = [];
      for (let i = 0; i < 2; i++) {
        const hash = await walletOf(treasury).writeContract({ address: token, abi: TEST_USDT_ABI, functionName: 'transfer', args: [holder, MICROS], chain: null });
        const receipt = await mined(hash);
        expect(receipt.status).toBe('success');
        gas.push(receipt.gasUsed);
      }
      lines.push(`${symbol.padEnd(6)} new holder ${gas[0]}  existing holder ${gas[1]}`);
      expect(gas[0]! <= TYPICAL_TRANSFER_GAS, symbol).toBe(true);
    }
    console.log(`gas of one transfer on the devnet's stand-ins:\n${lines.join('\n')}`);
  });
});

describe('USDT (Tether: returns nothing, blacklists senders)', () => {
  it('pays each recipient of a batch exactly through the batch contract, though transfer and transferFrom return nothing', async () => {
    const recipients = freshAddresses(20);
    const amounts = recipients.map((_, i) => BigInt(i + 1) * MICROS + BigInt(i));
    const total = amounts.reduce((sum, amount) => sum + amount, 0n);
    const before = await balanceOf(devnet.usdtAddress, treasury.address);
    // Nothing comes back from Tether's transfer: a call returns no data at all.
    const data = encodeFunctionData({ abi: TEST_USDT_ABI, functionName: 'transfer', args: [recipients[0]!, 1n] });
    const call = await reader.call({ account: treasury.address, to: devnet.usdtAddress, data });
    expect(call.data).toBeUndefined();

    const receipt = await sendBatch(devnet.usdtAddress, recipients, amounts);

    expect(receipt.status).toBe('success');
    expect(await balancesOf(devnet.usdtAddress, recipients)).toEqual(amounts);
    expect(await balanceOf(devnet.usdtAddress, treasury.address)).toBe(before - total);
    expect(await balanceOf(devnet.usdtAddress, devnet.batchContractAddress)).toBe(0n);
    const transfers = parseEventLogs({ abi: TEST_USDT_ABI, eventName: 'Transfer', logs: receipt.logs });
    expect(transfers.map((log) => [log.args.to, log.args.value])).toEqual([[devnet.batchContractAddress, total], ...recipients.map((to, i) => [to, amounts[i]])]);
    // Tether never spends an allowance of 2^256-1.
    expect(await reader.readContract({ address: devnet.usdtAddress, abi: TEST_USDT_ABI, functionName: 'allowance', args: [treasury.address, devnet.batchContractAddress] })).toBe(maxUint256);
  });

  it("refuses a blacklisted SENDER without a reason, alone and in a batch, yet pays a blacklisted recipient, as Tether's does", async () => {
    const sender = await stranger('usdt', 10n * MICROS);
    const [recipient, listedRecipient] = freshAddresses(2) as [Address, Address];
    await blacklistEthereumAddress(devnet, sender.address, 'usdt');
    await blacklistEthereumAddress(devnet, listedRecipient, 'usdt');
    expect(await reader.readContract({ address: devnet.usdtAddress, abi: TEST_USDT_ABI, functionName: 'isBlackListed', args: [sender.address] })).toBe(true);
    expect(await reader.readContract({ address: devnet.usdtAddress, abi: TEST_USDT_ABI, functionName: 'getBlackListStatus', args: [listedRecipient] })).toBe(true);

    // The listed sender: its own transfer reverts with no data, and its batch's pull with the contract's own reason.
    const direct = reader.simulateContract({ account: sender.address, address: devnet.usdtAddress, abi: TEST_USDT_ABI, functionName: 'transfer', args: [recipient, MICROS] });
    await expect(direct).rejects.toThrow(/reverted/);
    await expect(simulateBatch(sender.address, devnet.usdtAddress, [recipient], [MICROS])).rejects.toThrow('BatchTransfer: token call reverted without a reason');
    const refused = await sendBatch(devnet.usdtAddress, [recipient], [MICROS], { from: sender, gas: REVERTING_GAS });
    expect(refused.status).toBe('reverted');
    expect(await balanceOf(devnet.usdtAddress, sender.address)).toBe(10n * MICROS);

    // The listed recipient: the classic TetherToken checks only who sends, so the treasury's batch pays it too.
    const paid = await sendBatch(devnet.usdtAddress, [recipient, listedRecipient], [2n * MICROS, 3n * MICROS]);
    expect(paid.status).toBe('success');
    expect(await balancesOf(devnet.usdtAddress, [recipient, listedRecipient])).toEqual([2n * MICROS, 3n * MICROS]);
  });

  it("refuses a new non-zero allowance over a non-zero one, as Tether's approve does: 0 first", async () => {
    const holder = await stranger('usdt', MICROS);
    const spender = freshAddresses(1)[0]!;
    const approve = (value: bigint) =>
      walletOf(holder).writeContract({ address: devnet.usdtAddress, abi: TEST_USDT_ABI, functionName: 'approve', args: [spender, value], chain: null, gas: REVERTING_GAS });
    const allowance = () => reader.readContract({ address: devnet.usdtAddress, abi: TEST_USDT_ABI, functionName: 'allowance', args: [holder.address, spender] });
    expect((await mined(await approve(5n))).status).toBe('success');
    expect((await mined(await approve(7n))).status).toBe('reverted');
    expect(await allowance()).toBe(5n);
    expect((await mined(await approve(0n))).status).toBe('success');
    expect((await mined(await approve(7n))).status).toBe('success');
    expect(await allowance()).toBe(7n);
  });

  it('devnet fund mints USDT as Tether does (issued to the owner, then sent) and sends it back as the recipient', async () => {
    const [holder] = freshAddresses(1) as [Address];
    const supplyBefore = await reader.readContract({ address: devnet.usdtAddress, abi: TEST_USDT_ABI, functionName: 'totalSupply' });
    const minted = await sendDevnetEthereumTransfer(devnet, { to: holder, usdcMicros: 0n, usdtMicros: 4_250_000n, pyusdMicros: 1_500_000n, wei: 0n });
    expect(minted).toHaveLength(3); // issue, transfer (USDT); mint (PYUSD)
    expect(await balanceOf(devnet.usdtAddress, holder)).toBe(4_250_000n);
    expect(await balanceOf(devnet.pyusdAddress, holder)).toBe(1_500_000n);
    expect(await reader.readContract({ address: devnet.usdtAddress, abi: TEST_USDT_ABI, functionName: 'totalSupply' })).toBe(supplyBefore + 4_250_000n);
    const receipt = await reader.getTransactionReceipt({ hash: minted[1]! });
    expect(parseEventLogs({ abi: TEST_USDT_ABI, eventName: 'Transfer', logs: receipt.logs }).map((log) => log.args)).toEqual([
      { from: await reader.readContract({ address: devnet.usdtAddress, abi: TEST_USDT_ABI, functionName: 'owner' }), to: holder, value: 4_250_000n },
    ]);

    await sendDevnetEthereumTransfer(devnet, { to: treasury.address, from: holder, usdcMicros: 0n, usdtMicros: 4_000_000n, wei: 0n });
    expect(await balanceOf(devnet.usdtAddress, holder)).toBe(250_000n);
  });
});

describe("PYUSD (Paxos: returns true, freezes both ends)", () => {
  it('pays each recipient of a batch exactly; a frozen recipient reverts the whole batch with AddressFrozen()', async () => {
    const recipients = freshAddresses(10);
    const amounts = recipients.map((_, i) => BigInt(i + 1) * 1_000_001n);
    const before = await balanceOf(devnet.pyusdAddress, treasury.address);
    const paid = await sendBatch(devnet.pyusdAddress, recipients, amounts);
    expect(paid.status).toBe('success');
    expect(await balancesOf(devnet.pyusdAddress, recipients)).toEqual(amounts);
    const total = amounts.reduce((sum, amount) => sum + amount, 0n);
    expect(await balanceOf(devnet.pyusdAddress, treasury.address)).toBe(before - total);

    const others = freshAddresses(3);
    await blacklistEthereumAddress(devnet, others[1]!, 'pyusd');
    expect(await reader.readContract({ address: devnet.pyusdAddress, abi: TEST_PYUSD_ABI, functionName: 'isFrozen', args: [others[1]!] })).toBe(true);
    const errors = TEST_PYUSD_ABI.filter((item) => item.type === 'error');
    await expect(simulateBatch(treasury.address, devnet.pyusdAddress, others, [MICROS, MICROS, MICROS], errors)).rejects.toThrow('AddressFrozen()');
    const refused = await sendBatch(devnet.pyusdAddress, others, [MICROS, MICROS, MICROS], { gas: REVERTING_GAS });
    expect(refused.status).toBe('reverted');
    expect(await balancesOf(devnet.pyusdAddress, others)).toEqual([0n, 0n, 0n]);
    expect(await balanceOf(devnet.pyusdAddress, treasury.address)).toBe(before - total);
  });

  it('refuses what a frozen address sends too', async () => {
    const sender = await stranger('pyusd', 2n * MICROS);
    await blacklistEthereumAddress(devnet, sender.address, 'pyusd');
    const [recipient] = freshAddresses(1) as [Address];
    const direct = reader.simulateContract({ account: sender.address, address: devnet.pyusdAddress, abi: TEST_PYUSD_ABI, functionName: 'transfer', args: [recipient, MICROS] });
    await expect(direct).rejects.toThrow('AddressFrozen()');
  });
});
