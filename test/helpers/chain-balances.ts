// What a recipient holds on the devnets, read with plain JSON-RPC: the failover tests count what each was paid there,
// since a lost commit loses the books' record of a payout but never the chain's.
import type { Address as SolanaAddress } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { createPublicClient, http, parseAbi, type Address } from 'viem';

const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)']);

export async function ethereumUsdcOf(rpcUrl: string, usdc: string, owner: string): Promise<bigint> {
  return createPublicClient({ transport: http(rpcUrl) }).readContract({ address: usdc as Address, abi: ERC20, functionName: 'balanceOf', args: [owner as Address] });
}

export async function solanaUsdcOf(rpcUrl: string, mint: string, owner: string): Promise<bigint> {
  const [ata] = await findAssociatedTokenPda({ owner: owner as SolanaAddress, mint: mint as SolanaAddress, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const response = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getTokenAccountBalance', params: [ata] }),
  });
  const body = (await response.json()) as { result?: { value: { amount: string } }; error?: unknown };
  return body.result ? BigInt(body.result.value.amount) : 0n;
}
