// Reads of LiteSVM state in the shapes the RPC reports: lamports per account and SPL token balances
// (preBalances/postBalances, preTokenBalances/postTokenBalances, getTokenAccountBalance).
import type { Address } from '@solana/kit';
import { getMintDecoder, getTokenDecoder, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { LiteSVM } from 'litesvm';
import { formatUnits } from '../../money.js';

export const TOKEN_2022_PROGRAM_ADDRESS = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
const TOKEN_ACCOUNT_BYTES = 165;
const MINT_BYTES = 82;
const ACCOUNT_STATE_OFFSET = 108; // 0 = uninitialized

export interface UiTokenAmount {
  amount: string;
  decimals: number;
  uiAmount: number;
  uiAmountString: string;
}

export interface TokenBalance {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: UiTokenAmount;
}

export interface TokenAccountState {
  mint: Address;
  owner: Address;
  amount: bigint;
  decimals: number;
  programId: string;
}

export interface BalanceSnapshot {
  lamports: bigint[];
  tokens: TokenBalance[];
}

export function uiTokenAmount(amount: bigint, decimals: number): UiTokenAmount {
  const text = formatUnits(amount, decimals);
  return { amount: amount.toString(), decimals, uiAmount: Number(text), uiAmountString: text };
}

export function isTokenProgram(program: string): boolean {
  return program === TOKEN_PROGRAM_ADDRESS || program === TOKEN_2022_PROGRAM_ADDRESS;
}

/** The SPL token account at this address, or null when there is none (missing, or another kind of account). */
export function readTokenAccount(svm: LiteSVM, address: Address): TokenAccountState | null {
  const account = svm.getAccount(address);
  if (!account.exists || !isTokenProgram(account.programAddress)) return null;
  const data = account.data;
  if (data.length < TOKEN_ACCOUNT_BYTES || data[ACCOUNT_STATE_OFFSET] === 0) return null;
  const token = getTokenDecoder().decode(data.subarray(0, TOKEN_ACCOUNT_BYTES));
  const decimals = mintDecimals(svm, token.mint);
  if (decimals === null) return null;
  return { mint: token.mint, owner: token.owner, amount: token.amount, decimals, programId: account.programAddress };
}

export function mintDecimals(svm: LiteSVM, mint: Address): number | null {
  const account = svm.getAccount(mint);
  if (!account.exists || !isTokenProgram(account.programAddress) || account.data.length < MINT_BYTES) return null;
  return getMintDecoder().decode(account.data.subarray(0, MINT_BYTES)).decimals;
}

export function snapshotBalances(svm: LiteSVM, keys: readonly Address[]): BalanceSnapshot {
  const lamports = keys.map((key) => svm.getBalance(key) ?? 0n);
  const tokens: TokenBalance[] = [];
  keys.forEach((key, accountIndex) => {
    const token = readTokenAccount(svm, key);
    if (!token) return;
    tokens.push({
      accountIndex,
      mint: token.mint,
      owner: token.owner,
      programId: token.programId,
      uiTokenAmount: uiTokenAmount(token.amount, token.decimals),
    });
  });
  return { lamports, tokens };
}
