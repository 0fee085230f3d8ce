// The chains stableroute knows by name: their defaults, the only place in the code that names a chain (issue 27).
// CHAINS lists the chains a service pays out on; a chain named here needs only its RPC URL, USDC address and
// signer, any other EVM chain needs every setting (src/config.ts). Solana stays one chain, named `solana`.
import type { Token } from './token.js';

/** Which protocol a chain speaks: every chain but Solana is an EVM chain. */
export type ChainFamily = 'evm' | 'solana';

/**
 * When a transfer is final (decision 159): `confirmations` counts blocks on top of the one holding it (Ethereum's
 * rule until now); `finalized` and `safe` follow the node's block tags, which a rollup sets by its own rule (an
 * OP-stack or Arbitrum block is `finalized` once the L1 block holding its batch is).
 */
export type FinalityRule = 'confirmations' | 'finalized' | 'safe';
export const FINALITY_RULES: readonly FinalityRule[] = ['confirmations', 'finalized', 'safe'];

/**
 * What an EVM chain charges a transaction (decision 189): `gas`, gas used times its price; `op-stack`, an OP-stack
 * rollup's L1 data fee and operator fee on top, estimated by its GasPriceOracle (the receipt reports them either way).
 */
export type FeeModel = 'gas' | 'op-stack';
export const FEE_MODELS: readonly FeeModel[] = ['gas', 'op-stack'];

export interface ChainPreset {
  family: ChainFamily;
  /** The chain id a node must report; null: not checked unless NAME_CHAIN_ID is set. */
  chainId: number | null;
  /** chainId is checked in production only: in development a devnet's node reports its own, unless NAME_CHAIN_ID says it. */
  chainIdInProductionOnly?: true;
  finality: FinalityRule;
  /** NAME_FEE_MODEL's default: `gas` unless said. */
  feeModel?: FeeModel;
  /** Blocks until final under the `confirmations` rule. */
  confirmations: number;
  /** The currency fees are paid in, and its USD price setting `<CURRENCY>_USD_PRICE`. */
  nativeCurrency: string;
  /** Seconds between blocks, and from inclusion to finality by the chain's rule: the simulator's timings. */
  blockSeconds: number;
  finalSeconds: number;
  /** A typical USDC transfer's fee in the native currency's smallest unit: the simulator's fee. */
  transferFeeNative: bigint;
  /** NAME_GAS_LOW_WATER's default, in whole native units. */
  gasLowWater: string;
  /** Routing's fee and time to finality for a chain no health sample has measured yet. */
  typicalFeeUsd: number;
  typicalConfirmationSeconds: number;
  /**
   * Each token's mainnet contract (EVM) or mint (Solana), used in production when `NAME_<TOKEN>_ADDRESS` or
   * `SOLANA_<TOKEN>_MINT` is unset (decision 235); a token absent here needs its variable.
   */
  tokens: Readonly<Partial<Record<Token, string>>>;
}

const ETHER = 10n ** 18n;

export const CHAIN_PRESETS: Readonly<Record<string, ChainPreset>> = {
  // 65k gas at ~10 gwei; final 12 blocks deep, as stableroute has always counted it.
  ethereum: { family: 'evm', chainId: 1, chainIdInProductionOnly: true, finality: 'confirmations', confirmations: 12, nativeCurrency: 'ETH', blockSeconds: 12, finalSeconds: 156, transferFeeNative: 650_000n * 10n ** 9n, gasLowWater: '0.05', typicalFeeUsd: 1.5, typicalConfirmationSeconds: 180, tokens: { usdc: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', usdt: '0xdAC17F958D2ee523a2206206994597C13D831ec7', pyusd: '0x6c3ea9036406852006290770BEdFcAbA0e23A0e8' } },
  // 5000 lamports per signature plus a priority fee; finalized after ~32 slots.
  solana: { family: 'solana', chainId: null, finality: 'finalized', confirmations: 32, nativeCurrency: 'SOL', blockSeconds: 0.4, finalSeconds: 13, transferFeeNative: 5_000n, gasLowWater: '0.05', typicalFeeUsd: 0.001, typicalConfirmationSeconds: 13, tokens: { usdc: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', usdt: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB', pyusd: '2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo' } },
  // OP-stack and Arbitrum rollups: a few cents of a cent per transfer; final when the L1 block with the batch is.
  base: { family: 'evm', chainId: 8453, finality: 'finalized', feeModel: 'op-stack', confirmations: 1, nativeCurrency: 'ETH', blockSeconds: 2, finalSeconds: 1500, transferFeeNative: ETHER / 500_000n, gasLowWater: '0.005', typicalFeeUsd: 0.006, typicalConfirmationSeconds: 1500, tokens: { usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' } },
  optimism: { family: 'evm', chainId: 10, finality: 'finalized', feeModel: 'op-stack', confirmations: 1, nativeCurrency: 'ETH', blockSeconds: 2, finalSeconds: 1500, transferFeeNative: ETHER / 500_000n, gasLowWater: '0.005', typicalFeeUsd: 0.006, typicalConfirmationSeconds: 1500, tokens: { usdc: '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85', usdt: '0x94b008aA00579c1307B0EF2c499aD98a8ce58e58' } },
  arbitrum: { family: 'evm', chainId: 42161, finality: 'finalized', confirmations: 1, nativeCurrency: 'ETH', blockSeconds: 0.25, finalSeconds: 1200, transferFeeNative: ETHER / 400_000n, gasLowWater: '0.005', typicalFeeUsd: 0.008, typicalConfirmationSeconds: 1200, tokens: { usdc: '0xaf88d065e77c8cC2239327C5EDb3A432268e5831', usdt: '0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9' } },
  // Polygon PoS: blocks finalized by Heimdall milestones within seconds; fees in POL.
  polygon: { family: 'evm', chainId: 137, finality: 'finalized', confirmations: 1, nativeCurrency: 'POL', blockSeconds: 2, finalSeconds: 10, transferFeeNative: ETHER / 500n, gasLowWater: '5', typicalFeeUsd: 0.0005, typicalConfirmationSeconds: 12, tokens: { usdc: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359', usdt: '0xc2132D05D31c914a87C6611C10748AEb04B58e8F' } },
};

/** The chain whose family is Solana; every other chain is an EVM chain. */
export const SOLANA_CHAIN = 'solana';

/** What CHAINS means when unset: the spec's two chains. */
export const DEFAULT_CHAINS: readonly string[] = ['ethereum', SOLANA_CHAIN];

/** USD prices of native currencies when `<CURRENCY>_USD_PRICE` is unset. */
export const DEFAULT_NATIVE_USD_PRICES: Readonly<Record<string, number>> = { ETH: 3000, SOL: 150, POL: 0.25 };

/** Decimals of a chain family's native currency: wei and lamports. */
export const NATIVE_DECIMALS: Readonly<Record<ChainFamily, number>> = { evm: 18, solana: 9 };
