// One contract call signed by a devnet account, returned once mined: what the devnet's own set-up steps send (the
// token owner's blacklist, the treasury's approval of the batch contract). Bounded: a node that stops answering
// fails the call within RECEIPT_TIMEOUT_MS.
import { createPublicClient, createWalletClient, http, type Abi, type Address, type ContractFunctionArgs, type ContractFunctionName, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

const RPC_TIMEOUT_MS = 10_000;
const RECEIPT_TIMEOUT_MS = 60_000;
const RECEIPT_POLL_MS = 50;

export async function writeAndWait<const abi extends Abi, name extends ContractFunctionName<abi, 'nonpayable' | 'payable'>>(
  rpcUrl: string,
  key: Hex,
  call: { address: Address; abi: abi; functionName: name; args: ContractFunctionArgs<abi, 'nonpayable' | 'payable', name> },
  what: string,
): Promise<void> {
  const transport = http(rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 1 });
  const wallet = createWalletClient({ account: privateKeyToAccount(key), transport });
  const hash = await wallet.writeContract({ ...call, chain: null } as Parameters<typeof wallet.writeContract>[0]);
  const receipt = await createPublicClient({ transport }).waitForTransactionReceipt({ hash, pollingInterval: RECEIPT_POLL_MS, timeout: RECEIPT_TIMEOUT_MS });
  if (receipt.status !== 'success') throw new Error(`${what} failed in tx ${hash}`);
}
