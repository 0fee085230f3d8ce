// Freezes an address in one of the devnet's tokens, as its issuer does on the real token, signed by the tokens' owner
// (the devnet's deployer); returns once the transaction is mined. What each refuses afterwards is the issuer's rule:
// USDC (Circle's blacklist) every transfer to or from it, "Blacklistable: account is blacklisted"; USDT (Tether's
// addBlackList) only what it SENDS, without a reason, while it still receives; PYUSD (Paxos' freeze) every transfer
// to or from it, AddressFrozen().
import type { Address } from 'viem';
import { DEPLOYER_KEY } from './ethereum.js';
import type { DevnetTokenAddresses } from './ethereum-tokens.js';
import type { DevnetToken } from './tokens.js';
import { writeAndWait } from './ethereum-write.js';
import { TEST_PYUSD_ABI } from './pyusd-token.js';
import { TEST_USDC_ABI } from './usdc-token.js';
import { TEST_USDT_ABI } from './usdt-token.js';

type Chain = { rpcUrl: string } & Pick<DevnetTokenAddresses, 'usdcAddress'> & Partial<DevnetTokenAddresses>;

export async function blacklistEthereumAddress(chain: Chain, address: Address, token: DevnetToken = 'usdc'): Promise<void> {
  const what = `blacklisting ${address} in ${token}`;
  if (token === 'usdc') {
    await writeAndWait(chain.rpcUrl, DEPLOYER_KEY, { address: chain.usdcAddress, abi: TEST_USDC_ABI, functionName: 'blacklist', args: [address] }, what);
    return;
  }
  const contract = chain[`${token}Address`];
  if (contract === undefined) throw new RangeError(`the chain has no ${token} address`);
  if (token === 'usdt') {
    await writeAndWait(chain.rpcUrl, DEPLOYER_KEY, { address: contract, abi: TEST_USDT_ABI, functionName: 'addBlackList', args: [address] }, what);
  } else {
    await writeAndWait(chain.rpcUrl, DEPLOYER_KEY, { address: contract, abi: TEST_PYUSD_ABI, functionName: 'freeze', args: [address] }, what);
  }
}
