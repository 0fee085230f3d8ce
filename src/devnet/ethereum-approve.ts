// The treasury's standing approval to the devnet's batch-transfer contract (issue 28): what an operator does once
// before setting NAME_BATCH_CONTRACT, done by `stableroute devnet` for the treasury key it hands out. The contract
// pulls only from its caller, so the approval is the treasury's alone to use. Returns once the transaction is mined.
import { createPublicClient, createWalletClient, erc20Abi, http, maxUint256, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

const RPC_TIMEOUT_MS = 10_000;
const RECEIPT_TIMEOUT_MS = 60_000;
const RECEIPT_POLL_MS = 50;

export async function approveBatchContract(chain: { rpcUrl: string; usdcAddress: Address; batchContractAddress: Address }, treasuryKey: Hex): Promise<void> {
  const transport = http(chain.rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 1 });
  const wallet = createWalletClient({ account: privateKeyToAccount(treasuryKey), transport });
  const hash = await wallet.writeContract({
    address: chain.usdcAddress,
    abi: erc20Abi,
    functionName: 'approve',
    args: [chain.batchContractAddress, maxUint256],
    chain: null,
  });
  const receipt = await createPublicClient({ transport }).waitForTransactionReceipt({ hash, pollingInterval: RECEIPT_POLL_MS, timeout: RECEIPT_TIMEOUT_MS });
  if (receipt.status !== 'success') throw new Error(`approving the batch contract ${chain.batchContractAddress} failed in tx ${hash}`);
}
