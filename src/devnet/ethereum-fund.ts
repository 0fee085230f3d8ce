// Credits an address on the anvil devnet: ETH through anvil_setBalance, test USDC minted by the token's owner (the
// deployer). Used for a treasury whose key the devnet does not hold (a PKCS#11 token). Returns once the mint is mined.
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { TEST_USDC_ABI } from './usdc-token.js';

const RPC_TIMEOUT_MS = 10_000;
const RECEIPT_TIMEOUT_MS = 60_000;
const RECEIPT_POLL_MS = 50;

export interface EthereumFunding {
  usdcMicros: bigint;
  wei: bigint;
}

export async function fundEthereumAddress(
  chain: { rpcUrl: string; usdcAddress: Address; ownerKey: Hex },
  to: Address,
  funding: EthereumFunding,
): Promise<void> {
  const transport = http(chain.rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 1 });
  await createTestClient({ mode: 'anvil', transport }).setBalance({ address: to, value: funding.wei });
  if (funding.usdcMicros === 0n) return;
  const wallet = createWalletClient({ account: privateKeyToAccount(chain.ownerKey), transport });
  const hash = await wallet.writeContract({
    address: chain.usdcAddress,
    abi: TEST_USDC_ABI,
    functionName: 'mint',
    args: [to, funding.usdcMicros],
    chain: null,
  });
  const receipt = await createPublicClient({ transport }).waitForTransactionReceipt({ hash, pollingInterval: RECEIPT_POLL_MS, timeout: RECEIPT_TIMEOUT_MS });
  if (receipt.status !== 'success') throw new Error(`USDC mint to ${to} failed in tx ${hash}`);
}
