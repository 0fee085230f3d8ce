// `stableroute devnet fund --chain ethereum`: real transactions on the anvil devnet, so that the service's deposit
// scanner sees them as it would on a network. Without `from`: test USDC minted by the token's owner (the devnet's
// deployer) and ETH sent from the deployer's account. With `from`: the transfer is sent AS that address (anvil
// impersonation, its gas topped up with anvil_setBalance), e.g. a payout's recipient sending it back.
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  parseAbi,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DEPLOYER_KEY } from './ethereum.js';
import { TEST_USDC_ABI } from './usdc-token.js';

const RPC_TIMEOUT_MS = 10_000;
const RECEIPT_TIMEOUT_MS = 60_000;
/** ETH an impersonated sender gets on top of what it sends, for gas. */
const GAS_ALLOWANCE_WEI = 10n ** 16n;
const ERC20_TRANSFER = parseAbi(['function transfer(address to, uint256 value) returns (bool)']);

export interface DevnetEthereumTransfer {
  to: Address;
  /** Sends as this address (impersonated); default: mints USDC and sends ETH from the devnet's deployer. */
  from?: Address;
  usdcMicros: bigint;
  wei: bigint;
}

/**
 * Sends the transfers (USDC first, then ETH) and, unless `wait` is false, returns once each is mined and succeeded.
 * Returns their tx hashes. Throws with the reason when the node refuses or a transfer reverts.
 */
export async function sendDevnetEthereumTransfer(
  chain: { rpcUrl: string; usdcAddress: Address },
  request: DevnetEthereumTransfer,
  options: { wait?: boolean } = {},
): Promise<Hex[]> {
  const transport = http(chain.rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 1 });
  const publicClient = createPublicClient({ transport, cacheTime: 0 });
  const hashes: Hex[] = [];
  if (request.from === undefined) {
    const wallet = createWalletClient({ account: privateKeyToAccount(DEPLOYER_KEY), transport });
    if (request.usdcMicros > 0n) {
      hashes.push(await wallet.writeContract({ address: chain.usdcAddress, abi: TEST_USDC_ABI, functionName: 'mint', args: [request.to, request.usdcMicros], chain: null }));
    }
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
      if (request.usdcMicros > 0n) {
        const held = await publicClient.readContract({ address: chain.usdcAddress, abi: TEST_USDC_ABI, functionName: 'balanceOf', args: [from] });
        if (held < request.usdcMicros) throw new Error(`${from} holds ${held} USDC micro-units, less than the ${request.usdcMicros} to send`);
        hashes.push(await wallet.writeContract({ address: chain.usdcAddress, abi: ERC20_TRANSFER, functionName: 'transfer', args: [request.to, request.usdcMicros], chain: null }));
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
