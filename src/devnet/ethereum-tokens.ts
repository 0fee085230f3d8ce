// The devnet's three ERC-20 stand-ins and how each is minted: every token the devnet deploys has its issuer's own
// interface (src/devnet/Test*.sol), so "give X some tokens" is one call for USDC and PYUSD and two for USDT (Tether's
// owner issues to itself, then pays out). Signed by the tokens' owner, the devnet's deployer.
import type { Account, Address, Chain, Hex, Transport, WalletClient } from 'viem';
import { TEST_PYUSD_ABI } from './pyusd-token.js';
import { TEST_USDC_ABI } from './usdc-token.js';
import type { DevnetToken } from './tokens.js';
import { TEST_USDT_ABI } from './usdt-token.js';


/** Where a devnet EVM chain's tokens live (what EthereumDevnet carries). */
export interface DevnetTokenAddresses {
  usdcAddress: Address;
  usdtAddress: Address;
  pyusdAddress: Address;
}

export function tokenAddress(chain: DevnetTokenAddresses, token: DevnetToken): Address {
  return { usdc: chain.usdcAddress, usdt: chain.usdtAddress, pyusd: chain.pyusdAddress }[token];
}

type Wallet = WalletClient<Transport, Chain | undefined, Account>;
type Nonce = { nonce?: number };

/**
 * Sends what gives `to` `amount` of `token` (the owner's wallet), with consecutive nonces from `nonce` when given;
 * returns the hashes, unmined. USDT: issue (to the owner, no Transfer event) then transfer, as Tether mints.
 */
export async function sendMint(wallet: Wallet, token: DevnetToken, address: Address, to: Address, amount: bigint, at: Nonce = {}): Promise<Hex[]> {
  const nonce = (k: number) => (at.nonce === undefined ? {} : { nonce: at.nonce + k });
  switch (token) {
    case 'usdc':
      return [await wallet.writeContract({ address, abi: TEST_USDC_ABI, functionName: 'mint', args: [to, amount], chain: null, ...nonce(0) })];
    case 'pyusd':
      return [await wallet.writeContract({ address, abi: TEST_PYUSD_ABI, functionName: 'mint', args: [to, amount], chain: null, ...nonce(0) })];
    case 'usdt':
      return [
        await wallet.writeContract({ address, abi: TEST_USDT_ABI, functionName: 'issue', args: [amount], chain: null, ...nonce(0) }),
        await wallet.writeContract({ address, abi: TEST_USDT_ABI, functionName: 'transfer', args: [to, amount], chain: null, ...nonce(1) }),
      ];
  }
}

/** How many transactions sendMint sends for `token`. */
export function mintTransactions(token: DevnetToken): number {
  return token === 'usdt' ? 2 : 1;
}
