// Reads of LiteSVM state in the shapes the RPC reports: lamports per account and SPL token balances
// (preBalances/postBalances, preTokenBalances/postTokenBalances, getTokenAccountBalance).
import type { Address } from '@solana/kit';
import { getMintDecoder, getTokenDecoder, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { LiteSVM } from 'litesvm';
import { formatUnits } from '../../money.js';
import { TOKEN_2022_PROGRAM_ADDRESS } from './token-2022.js';

const TOKEN_ACCOUNT_BYTES = 165;
const MINT_BYTES = 82;
const ACCOUNT_STATE_OFFSET = 108; // 0 = uninitialized
// Token-2022: an account longer than the classic 165 bytes says what it is in the byte after them.
const ACCOUNT_TYPE_OFFSET = 165;
const ACCOUNT_TYPE_ACCOUNT = 2;

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

/**
 * Whether the data of an account of a token program is an initialised token account: 165 bytes (SPL Token), or more
 * with the account type "account" (Token-2022 with extensions; a mint with extensions is longer than 165 bytes too).
 */
export function isTokenAccountData(data: Uint8Array): boolean {
  if (data.length < TOKEN_ACCOUNT_BYTES || data[ACCOUNT_STATE_OFFSET] === 0) return false;
  return data.length === TOKEN_ACCOUNT_BYTES || data[ACCOUNT_TYPE_OFFSET] === ACCOUNT_TYPE_ACCOUNT;
}

/** The SPL token account at this address, or null when there is none (missing, or another kind of account). */
export function readTokenAccount(svm: LiteSVM, address: Address): TokenAccountState | null {
  const account = svm.getAccount(address);
  if (!account.exists || !isTokenProgram(account.programAddress)) return null;
  const data = account.data;
  if (!isTokenAccountData(data)) return null;
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

/**
 * The balances of a transaction's accounts. A program's account is never a token account, and reading it would copy
 * its whole executable: its lamports only. After the transaction (`before` given), an account it could not write keeps
 * its balances from before, and a token account its mint's decimals.
 */
export function snapshotBalances(
  svm: LiteSVM,
  keys: readonly Address[],
  accounts: { programs: ReadonlySet<number>; writable: (index: number) => boolean; before?: BalanceSnapshot },
): BalanceSnapshot {
  const lamports: bigint[] = [];
  const tokens: TokenBalance[] = [];
  const earlier = new Map(accounts.before?.tokens.map((t) => [t.accountIndex, t]));
  keys.forEach((key, accountIndex) => {
    if (accounts.before && !accounts.writable(accountIndex)) {
      lamports.push(accounts.before.lamports[accountIndex]!);
      const token = earlier.get(accountIndex);
      if (token) tokens.push(token);
      return;
    }
    if (accounts.programs.has(accountIndex)) {
      lamports.push(svm.getBalance(key) ?? 0n);
      return;
    }
    const account = svm.getAccount(key);
    lamports.push(account.exists ? account.lamports : 0n);
    if (!account.exists || !isTokenProgram(account.programAddress)) return;
    const data = account.data;
    if (!isTokenAccountData(data)) return;
    const token = getTokenDecoder().decode(data.subarray(0, TOKEN_ACCOUNT_BYTES));
    const known = earlier.get(accountIndex);
    const decimals = known?.mint === token.mint ? known.uiTokenAmount.decimals : mintDecimals(svm, token.mint);
    if (decimals === null) return;
    tokens.push({
      accountIndex,
      mint: token.mint,
      owner: token.owner,
      programId: account.programAddress,
      uiTokenAmount: uiTokenAmount(token.amount, decimals),
    });
  });
  return { lamports, tokens };
}
