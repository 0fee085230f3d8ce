// The treasury's standing approval to the devnet's batch-transfer contract (issue 28): what an operator does once
// before setting NAME_BATCH_CONTRACT, done by `stableroute devnet` for the treasury key it hands out. The contract
// pulls only from its caller, so the approval is the treasury's alone to use. Returns once the transaction is mined.
import { erc20Abi, maxUint256, type Address, type Hex } from 'viem';
import { writeAndWait } from './ethereum-write.js';

export async function approveBatchContract(chain: { rpcUrl: string; usdcAddress: Address; batchContractAddress: Address }, treasuryKey: Hex): Promise<void> {
  await writeAndWait(
    chain.rpcUrl,
    treasuryKey,
    { address: chain.usdcAddress, abi: erc20Abi, functionName: 'approve', args: [chain.batchContractAddress, maxUint256] },
    `approving the batch contract ${chain.batchContractAddress}`,
  );
}
