// Two names in CHAINS must not reach one network (issue 35): the same chain id with the same treasury or the same USDC
// contract would let two names book one wallet twice. A node's chain id is known only once it answers, so each EVM
// adapter claims its network when it has read the id (at start-up, or before its first transfer if its node was down
// then); the second claim of a network is refused with a ConfigError naming both chains, which stops start-up.
import { ConfigError } from '../config.js';
import type { Chain } from '../domain/chain.js';

export interface NetworkClaim {
  chain: Chain;
  /** What the node reported (eth_chainId). */
  chainId: number;
  treasury: string;
  token: string;
}

/** The networks this process's adapters reach, built once per process with its adapters (src/chains/factory.ts). */
export interface NetworkClaims {
  /** Records `claim`, or throws a ConfigError when another chain already reaches the same network. */
  claim(claim: NetworkClaim): void;
}

export function createNetworkClaims(): NetworkClaims {
  const claims = new Map<Chain, NetworkClaim>();
  return {
    claim(claim) {
      for (const other of claims.values()) {
        const shared = sharedWith(other, claim);
        if (other.chain === claim.chain || shared === null) continue;
        throw new ConfigError(
          'CHAINS',
          `${other.chain} and ${claim.chain} reach the same network (chain id ${claim.chainId}, ${shared}): two names would book one wallet twice; list the network once`,
        );
      }
      claims.set(claim.chain, claim);
    },
  };
}

/** What two claims share that makes them one network, or null. EVM addresses ignore case. */
function sharedWith(a: NetworkClaim, b: NetworkClaim): string | null {
  if (a.chainId !== b.chainId) return null;
  if (a.treasury.toLowerCase() === b.treasury.toLowerCase()) return `the same treasury ${b.treasury}`;
  if (a.token.toLowerCase() === b.token.toLowerCase()) return `the same USDC contract ${b.token}`;
  return null;
}
