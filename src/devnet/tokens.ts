// The dollar tokens every devnet chain carries (issue 40): USDC, USDT and PYUSD, 6 decimals each on both families.
export const DEVNET_TOKENS = ['usdc', 'usdt', 'pyusd'] as const;
export type DevnetToken = (typeof DEVNET_TOKENS)[number];
/** Base units (6 decimals for all three) per token; a token left out moves nothing. */
export type DevnetTokenAmounts = Partial<Record<DevnetToken, bigint>>;
export const DEVNET_TOKEN_DECIMALS = 6;
