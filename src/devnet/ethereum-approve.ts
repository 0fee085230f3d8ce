// The treasury's standing approvals to the devnet's batch-transfer contract (issue 28), one per token: what an
// operator does once before setting NAME_BATCH_CONTRACT, done by `stableroute devnet` for the treasury key it hands
// out. The contract pulls only from its caller, so an approval is the treasury's alone to use. USDT's approve returns
// nothing (a sent transaction never reads it) and refuses a new non-zero amount over a non-zero one: it is given once,
// for everything. Returns once every approval is mined.
import { erc20Abi, maxUint256, type Address, type Hex } from 'viem';
import { tokenAddress, type DevnetTokenAddresses } from './ethereum-tokens.js';
import { DEVNET_TOKENS } from './tokens.js';
import { writeAndWait } from './ethereum-write.js';

export async function approveBatchContract(chain: DevnetTokenAddresses & { rpcUrl: string; batchContractAddress: Address }, treasuryKey: Hex): Promise<void> {
  for (const token of DEVNET_TOKENS) {
    await writeAndWait(
      chain.rpcUrl,
      treasuryKey,
      { address: tokenAddress(chain, token), abi: erc20Abi, functionName: 'approve', args: [chain.batchContractAddress, maxUint256] },
      `approving the batch contract ${chain.batchContractAddress} for ${token}`,
    );
  }
}
