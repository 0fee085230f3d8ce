// The configured token must be a 6-decimal ERC-20: amounts are sent as micro-units unchanged, so an 18-decimal token
// would pay 10^12 times less than the merchant asked. Checked once, at start-up, and again before the first transfer
// when the node could not be asked then.
import {
  AbiDecodingDataSizeTooSmallError,
  AbiDecodingZeroDataError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  type Address,
} from 'viem';
import { ConfigError } from '../../config.js';
import { readDecimals, USDC_DECIMALS } from './erc20.js';
import type { EthereumRpc } from './rpc.js';

export const USDC_ADDRESS_SETTING = 'ETHEREUM_USDC_ADDRESS';

/** Answers that prove the address is not a 6-decimal token; anything else (an outage) proves nothing. */
const NOT_A_TOKEN = [ContractFunctionZeroDataError, ContractFunctionRevertedError, AbiDecodingZeroDataError, AbiDecodingDataSizeTooSmallError];

/** Resolves when the token has 6 decimals; rejects with a ConfigError when it provably has not, else with the RPC error. */
export async function verifyUsdcToken(rpc: EthereumRpc, token: Address, setting: string = USDC_ADDRESS_SETTING, name = 'USDC'): Promise<void> {
  let decimals: number;
  try {
    decimals = await readDecimals(rpc, token);
  } catch (error) {
    if (!provesNotAToken(error)) throw error;
    throw new ConfigError(setting, `${token} does not answer decimals() like an ERC-20 token (no contract there?)`);
  }
  if (decimals !== USDC_DECIMALS) {
    throw new ConfigError(
      setting,
      `${token} is a token with ${decimals} decimals; ${name} has ${USDC_DECIMALS}, and amounts are sent in micro-units`,
    );
  }
}

function provesNotAToken(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 16; e = e.cause, depth++) {
    if (NOT_A_TOKEN.some((type) => e instanceof type)) return true;
  }
  return false;
}
