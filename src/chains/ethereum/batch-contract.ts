// The batch-transfer contract (src/devnet/BatchTransfer.sol, issue 28): many USDC payouts in one transaction, the
// treasury approving it once. The service encodes its calls with this ABI; a batch is all or nothing, and a payout the
// token refuses reverts it with the token's own reason (e.g. "Blacklistable: account is blacklisted").
import { parseAbi } from 'viem';

export const BATCH_CONTRACT_ABI = parseAbi([
  'function batchTransfer(address token, address[] recipients, uint256[] amounts)',
  'function MAX_RECIPIENTS() view returns (uint256)',
]);
