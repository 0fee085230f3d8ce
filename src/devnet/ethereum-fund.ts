// Credits an address on the anvil devnet: ETH through anvil_setBalance, test tokens minted by the tokens' owner (the
// deployer). Used for a treasury whose key the devnet does not hold (a PKCS#11 token). Returns once the mints are mined.
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { sendMint, tokenAddress, type DevnetTokenAddresses } from './ethereum-tokens.js';
import { DEVNET_TOKENS } from './tokens.js';

const RPC_TIMEOUT_MS = 10_000;
const RECEIPT_TIMEOUT_MS = 60_000;
const RECEIPT_POLL_MS = 50;

export interface EthereumFunding {
  usdcMicros: bigint;
  wei: bigint;
  /** USDT and PYUSD to mint too (default none). */
  usdtMicros?: bigint;
  pyusdMicros?: bigint;
}

export async function fundEthereumAddress(chain: DevnetTokenAddresses & { rpcUrl: string; ownerKey: Hex }, to: Address, funding: EthereumFunding): Promise<void> {
  const transport = http(chain.rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 1 });
  await createTestClient({ mode: 'anvil', transport }).setBalance({ address: to, value: funding.wei });
  const wallet = createWalletClient({ account: privateKeyToAccount(chain.ownerKey), transport });
  const amounts = { usdc: funding.usdcMicros, usdt: funding.usdtMicros ?? 0n, pyusd: funding.pyusdMicros ?? 0n };
  const hashes: Hex[] = [];
  for (const token of DEVNET_TOKENS) {
    if (amounts[token] > 0n) hashes.push(...(await sendMint(wallet, token, tokenAddress(chain, token), to, amounts[token])));
  }
  const reader = createPublicClient({ transport });
  for (const hash of hashes) {
    const receipt = await reader.waitForTransactionReceipt({ hash, pollingInterval: RECEIPT_POLL_MS, timeout: RECEIPT_TIMEOUT_MS });
    if (receipt.status !== 'success') throw new Error(`a mint to ${to} failed in tx ${hash}`);
  }
}
