// The treasury's on-chain USDC and SOL, for reconciliation against the ledger. Read at 'finalized', the commitment at
// which the ledger books payouts. A treasury without a token account holds zero.
import { getBase64Encoder, type Address } from '@solana/kit';
import { getTokenDecoder } from '@solana-program/token';
import { call, type RpcClient } from './rpc.js';

export async function tokenAccountBalance(client: RpcClient, tokenAccount: Address): Promise<bigint> {
  const account = await call(
    client,
    'getAccountInfo',
    client.rpc.getAccountInfo(tokenAccount, { encoding: 'base64', commitment: 'finalized' }),
  );
  if (!account.value) return 0n;
  const [data] = account.value.data;
  return getTokenDecoder().decode(getBase64Encoder().encode(data)).amount;
}

/** Lamports held by `owner`, at 'finalized' like the USDC balance. */
export async function nativeBalance(client: RpcClient, owner: Address): Promise<bigint> {
  const balance = await call(client, 'getBalance', client.rpc.getBalance(owner, { commitment: 'finalized' }));
  return balance.value;
}
