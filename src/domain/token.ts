// The dollar stablecoins stableroute pays out in (issue 40): which exist, their ledger currency codes, and their
// presets per chain. Only USD-pegged tokens: one unit of any configured token pays one dollar (decision 234), so
// amounts, limits and policies stay USD and a token changes only which contract or mint moves them.
import type { ChainFamily } from './chain-presets.js';

export const TOKENS = ['usdc', 'usdt', 'pyusd'] as const;
/** A token as requests, settings and flags name it. */
export type Token = (typeof TOKENS)[number];
/** What NAME_TOKENS means when unset, and what a quote request without `tokens` accepts: the spec's USDC. */
export const DEFAULT_TOKEN: Token = 'usdc';

/** A token's currency code in the ledger (ledger_accounts.currency, a ledger entry's `currency`). */
export type TokenCurrency = 'USDC' | 'USDT' | 'PYUSD';

export function currencyOf(token: Token): TokenCurrency {
  return token.toUpperCase() as TokenCurrency;
}

/** The token whose ledger currency is `currency`; null for a native currency (ETH, SOL). */
export function tokenOfCurrency(currency: string): Token | null {
  const token = currency.toLowerCase();
  return isToken(token) ? token : null;
}

export function isToken(value: unknown): value is Token {
  return typeof value === 'string' && (TOKENS as readonly string[]).includes(value);
}

/**
 * Which program a Solana mint belongs to: PYUSD is a Token-2022 mint (its accounts 187 bytes, sent with
 * transferChecked), USDC and USDT classic SPL Token mints.
 */
export type SolanaTokenProgram = 'spl-token' | 'token-2022';

export interface TokenPreset {
  /** Every preset token has 6 decimals, as the ledger's micro-units do. */
  decimals: 6;
  solanaProgram: SolanaTokenProgram;
  /**
   * Gas of one transfer to a new holder on Ethereum mainnet, which routing prices a route by (Tether's USDT writes
   * more storage than USDC). Solana's fee is per signature, the same for every token.
   */
  evmTransferGas: bigint;
}

export const TOKEN_PRESETS: Readonly<Record<Token, TokenPreset>> = {
  usdc: { decimals: 6, solanaProgram: 'spl-token', evmTransferGas: 55_900n },
  // Tether's contract writes more storage per transfer than Circle's: ~63k gas to a new holder on mainnet.
  usdt: { decimals: 6, solanaProgram: 'spl-token', evmTransferGas: 63_200n },
  pyusd: { decimals: 6, solanaProgram: 'token-2022', evmTransferGas: 56_100n },
};

/**
 * The variable that overrides a token's contract or mint on a chain: `NAME_<TOKEN>_ADDRESS` on EVM chains,
 * `SOLANA_<TOKEN>_MINT` on Solana (so `ETHEREUM_USDC_ADDRESS` and `SOLANA_USDC_MINT` keep their names).
 */
export function tokenAddressVariable(chainEnvName: string, family: ChainFamily, token: Token): string {
  return family === 'solana' ? `${chainEnvName}_${currencyOf(token)}_MINT` : `${chainEnvName}_${currencyOf(token)}_ADDRESS`;
}

/**
 * A comma-separated token list (NAME_TOKENS): the tokens in order, or the problem with it (an unknown token, one
 * named twice, none at all).
 */
export function parseTokenList(raw: string): Token[] | { problem: string } {
  const names = raw.split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '');
  if (names.length === 0) return { problem: 'names no token' };
  const unknown = names.find((name) => !isToken(name));
  if (unknown !== undefined) return { problem: `"${unknown}" is not a token (presets: ${TOKENS.join(', ')})` };
  const repeated = names.find((name, i) => names.indexOf(name) !== i);
  if (repeated !== undefined) return { problem: `names ${repeated} twice` };
  return names as Token[];
}

/** A treasury's funds in one token on one chain: what a reservation draws from and locks. */
export function potOf(chain: string, token: Token): string {
  return `${chain}\u0000${token}`;
}

/**
 * What a transfer of `token` costs against a USDC one on a chain of `family`: on EVM chains the ratio of their mainnet
 * transfer gas (the health snapshot prices a USDC transfer), on Solana 1 (a fee per signature, whatever the mint).
 */
export function tokenFeeFactor(family: ChainFamily, token: Token): number {
  if (family !== 'evm') return 1;
  return Number(TOKEN_PRESETS[token].evmTransferGas) / Number(TOKEN_PRESETS.usdc.evmTransferGas);
}

/** A payment's `token` field, only when it is not USDC: a USDC payment shows exactly the spec's fields (decision 237). */
export function tokenField(intent: { token?: Token }): { token?: Token } {
  return intent.token === undefined || intent.token === DEFAULT_TOKEN ? {} : { token: intent.token };
}
