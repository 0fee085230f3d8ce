// The treasury's standing approvals to the devnet's batch-transfer contract (issue 28), one per token: what an
// operator does once before setting NAME_BATCH_CONTRACT, done by `stableroute devnet` for the treasury key it hands
// out. The contract pulls only from its caller, so an approval is the treasury's alone to use. USDT's approve returns
// nothing (a sent transaction never reads it) and refuses a new non-zero amount over a non-zero one: it is given once,
// for everything. The three are sent at once (consecutive nonces), so they share a block; returns once all are mined.
import { createPublicClient, createWalletClient, erc20Abi, http, maxUint256, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { tokenAddress, type DevnetTokenAddresses } from './ethereum-tokens.js';
import { DEVNET_TOKENS } from './tokens.js';

const RPC_TIMEOUT_MS = 10_000;
const RECEIPT_TIMEOUT_MS = 60_000;
const RECEIPT_POLL_MS = 50;

export async function approveBatchContract(chain: DevnetTokenAddresses & { rpcUrl: string; batchContractAddress: Address }, treasuryKey: Hex): Promise<void> {
  const transport = http(chain.rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 1 });
  const account = privateKeyToAccount(treasuryKey);
  const wallet = createWalletClient({ account, transport });
  const reader = createPublicClient({ transport });
  const nonce = await reader.getTransactionCount({ address: account.address, blockTag: 'pending' });
  const sent = await Promise.all(
    DEVNET_TOKENS.map(async (token, i) => ({
      token,
      hash: await wallet.writeContract({
        address: tokenAddress(chain, token),
        abi: erc20Abi,
        functionName: 'approve',
        args: [chain.batchContractAddress, maxUint256],
        nonce: nonce + i,
        chain: null,
      }),
    })),
  );
  for (const { token, hash } of sent) {
    const receipt = await reader.waitForTransactionReceipt({ hash, pollingInterval: RECEIPT_POLL_MS, timeout: RECEIPT_TIMEOUT_MS });
    if (receipt.status !== 'success') throw new Error(`approving the batch contract ${chain.batchContractAddress} for ${token} failed in tx ${hash}`);
  }
}
