// Freezes an address in the devnet's USDC, as Circle's blacklister does on the real token: afterwards every transfer
// to or from it reverts with "Blacklistable: account is blacklisted". Signed by the token's owner (the devnet's
// deployer); returns once the transaction is mined.
import { createPublicClient, createWalletClient, http, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DEPLOYER_KEY } from './ethereum.js';
import { TEST_USDC_ABI } from './usdc-token.js';

const RPC_TIMEOUT_MS = 10_000;
const RECEIPT_TIMEOUT_MS = 60_000;
const RECEIPT_POLL_MS = 50;

export async function blacklistEthereumAddress(chain: { rpcUrl: string; usdcAddress: Address }, address: Address): Promise<void> {
  const transport = http(chain.rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 1 });
  const wallet = createWalletClient({ account: privateKeyToAccount(DEPLOYER_KEY), transport });
  const hash = await wallet.writeContract({
    address: chain.usdcAddress,
    abi: TEST_USDC_ABI,
    functionName: 'blacklist',
    args: [address],
    chain: null,
  });
  const receipt = await createPublicClient({ transport }).waitForTransactionReceipt({ hash, pollingInterval: RECEIPT_POLL_MS, timeout: RECEIPT_TIMEOUT_MS });
  if (receipt.status !== 'success') throw new Error(`blacklisting ${address} failed in tx ${hash}`);
}
