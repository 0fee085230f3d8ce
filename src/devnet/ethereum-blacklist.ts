// Freezes an address in the devnet's USDC, as Circle's blacklister does on the real token: afterwards every transfer
// to or from it reverts with "Blacklistable: account is blacklisted". Signed by the token's owner (the devnet's
// deployer); returns once the transaction is mined.
import type { Address } from 'viem';
import { DEPLOYER_KEY } from './ethereum.js';
import { writeAndWait } from './ethereum-write.js';
import { TEST_USDC_ABI } from './usdc-token.js';

export async function blacklistEthereumAddress(chain: { rpcUrl: string; usdcAddress: Address }, address: Address): Promise<void> {
  await writeAndWait(chain.rpcUrl, DEPLOYER_KEY, { address: chain.usdcAddress, abi: TEST_USDC_ABI, functionName: 'blacklist', args: [address] }, `blacklisting ${address}`);
}
