// `stableroute devnet fund --chain ethereum`: real transactions on the anvil devnet, so that the service's deposit
// scanner sees them as it would on a network. Without `from`: test tokens minted by their owner (the devnet's
// deployer; USDT issued to it and then sent, as Tether mints) and ETH sent from the deployer's account. With `from`: the transfer is sent AS that address (anvil
// impersonation, its gas topped up with anvil_setBalance), e.g. a payout's recipient sending it back.
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  erc20Abi,
  http,
  parseAbi,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DEPLOYER_KEY } from './ethereum.js';
import { sendMint, type DevnetTokenAddresses } from './ethereum-tokens.js';
import { DEVNET_TOKENS, type DevnetToken } from './tokens.js';

const RPC_TIMEOUT_MS = 10_000;
const RECEIPT_TIMEOUT_MS = 60_000;
/** ETH an impersonated sender gets on top of what it sends, for gas. */
const GAS_ALLOWANCE_WEI = 10n ** 16n;
// Without outputs: USDT's returns nothing, and a sent transaction never reads what the others return.
const ERC20_TRANSFER = parseAbi(['function transfer(address to, uint256 value)']);

export interface DevnetEthereumTransfer {
  to: Address;
  /** Sends as this address (impersonated); default: mints the tokens and sends ETH from the devnet's deployer. */
  from?: Address;
  usdcMicros: bigint;
  wei: bigint;
  /** USDT and PYUSD too (default none); the chain must then name their addresses. */
  usdtMicros?: bigint;
  pyusdMicros?: bigint;
}

/** The chain: its node and the tokens it names (USDT and PYUSD only when a transfer moves them). */
export type DevnetEthereumChain = { rpcUrl: string } & Pick<DevnetTokenAddresses, 'usdcAddress'> & Partial<DevnetTokenAddresses>;

/**
 * Sends the transfers (USDC, USDT, PYUSD, then ETH) and, unless `wait` is false, returns once each is mined and succeeded.
 * Returns their tx hashes. Throws with the reason when the node refuses or a transfer reverts.
 */
export async function sendDevnetEthereumTransfer(
  chain: DevnetEthereumChain,
  request: DevnetEthereumTransfer,
  options: { wait?: boolean } = {},
): Promise<Hex[]> {
  const amounts: Record<DevnetToken, bigint> = { usdc: request.usdcMicros, usdt: request.usdtMicros ?? 0n, pyusd: request.pyusdMicros ?? 0n };
  const moves = DEVNET_TOKENS.filter((token) => amounts[token] > 0n).map((token) => {
    const address = chain[`${token}Address`];
    if (address === undefined) throw new RangeError(`no ${token.toUpperCase()} address for this chain: the devnet prints it`);
    return { token, address, amount: amounts[token] };
  });
  const transport = http(chain.rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 1 });
  const publicClient = createPublicClient({ transport, cacheTime: 0 });
  const hashes: Hex[] = [];
  if (request.from === undefined) {
    const wallet = createWalletClient({ account: privateKeyToAccount(DEPLOYER_KEY), transport });
    for (const move of moves) hashes.push(...(await sendMint(wallet, move.token, move.address, request.to, move.amount)));
    if (request.wei > 0n) hashes.push(await wallet.sendTransaction({ to: request.to, value: request.wei, chain: null }));
  } else {
    const from = request.from;
    const test = createTestClient({ mode: 'anvil', transport });
    const balance = await publicClient.getBalance({ address: from });
    const needed = request.wei + GAS_ALLOWANCE_WEI;
    if (balance < needed) await test.setBalance({ address: from, value: needed });
    await test.impersonateAccount({ address: from });
    try {
      const wallet = createWalletClient({ account: from, transport });
      for (const move of moves) {
        const held = await publicClient.readContract({ address: move.address, abi: erc20Abi, functionName: 'balanceOf', args: [from] });
        if (held < move.amount) throw new Error(`${from} holds ${held} ${move.token.toUpperCase()} micro-units, less than the ${move.amount} to send`);
        hashes.push(await wallet.writeContract({ address: move.address, abi: ERC20_TRANSFER, functionName: 'transfer', args: [request.to, move.amount], chain: null }));
      }
      if (request.wei > 0n) hashes.push(await wallet.sendTransaction({ to: request.to, value: request.wei, chain: null }));
    } finally {
      await test.stopImpersonatingAccount({ address: from });
    }
  }
  if (options.wait !== false) {
    for (const hash of hashes) {
      const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: RECEIPT_TIMEOUT_MS });
      if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted in block ${receipt.blockNumber}`);
    }
  }
  return hashes;
}
