// `stableroute devnet fund`: real transfers on a running devnet (the environment `stableroute devnet` printed), so
// the service's deposit scanner sees them as it would on a network. Without --from: test tokens (--usdc, --usdt,
// --pyusd) minted (EVM) or sent from a fresh faucet address (Solana), and native currency sent. With --from: sent AS that address (anvil
// impersonation; on the Solana devnet, processed without signature verification), e.g. a payout's recipient
// returning it. Exits 0 once the transfer is on chain.
import { parseArgs } from 'node:util';
import type { Address } from 'viem';
import { envName, type Config } from '../config.js';
import type { Chain } from '../domain/chain.js';
import { isChainIn } from '../domain/chain.js';
import { isWellFormedAddress } from '../domain/addresses.js';
import { AmountError, parseUnits } from '../money.js';
import { transferAmounts } from './transfers.js';
import { usage } from './exits.js';

const DEVNET_FUND_USAGE = `usage: stableroute devnet fund --chain NAME --to ADDRESS [--usdc N] [--usdt N] [--pyusd N] [--native N] [--from ADDRESS] [--json]
       against the running devnet chain NAME of CHAINS: NAME_RPC_URL + NAME_USDC_ADDRESS (and NAME_USDT_ADDRESS,
       NAME_PYUSD_ADDRESS for those tokens) on an EVM chain, or SOLANA_RPC_URL
`;
/** All three devnet tokens have 6 decimals. */
const TOKEN_DECIMALS = 6;

export async function devnetFundCommand(args: string[], config: Config): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      chain: { type: 'string' },
      to: { type: 'string' },
      from: { type: 'string' },
      usdc: { type: 'string' },
      usdt: { type: 'string' },
      pyusd: { type: 'string' },
      native: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  if (positionals.length > 0) return usage(DEVNET_FUND_USAGE);
  const chain = values.chain;
  if (!isChainIn(config.chainNames, chain)) return usage(DEVNET_FUND_USAGE, `--chain must be one of CHAINS (${config.chainNames.join(', ')})`);
  if (values.to === undefined || !isWellFormedAddress(chain, values.to)) return usage(DEVNET_FUND_USAGE, `--to must be a ${chain} address`);
  if (values.from !== undefined && !isWellFormedAddress(chain, values.from)) return usage(DEVNET_FUND_USAGE, `--from must be a ${chain} address`);
  const amounts = fundAmounts(chain, values);
  if (typeof amounts === 'string') return usage(DEVNET_FUND_USAGE, amounts);

  let txIds: string[];
  const settings = config.chains[chain]!;
  if (settings.family === 'evm') {
    const { rpcUrl, usdcAddress } = settings;
    const missing = [
      ...(rpcUrl ? [] : ['RPC_URL']),
      ...(usdcAddress ? [] : ['USDC_ADDRESS']),
      ...(amounts.usdt > 0n && !otherTokenAddress(chain, 'USDT') ? ['USDT_ADDRESS'] : []),
      ...(amounts.pyusd > 0n && !otherTokenAddress(chain, 'PYUSD') ? ['PYUSD_ADDRESS'] : []),
    ];
    if (missing.length > 0) {
      process.stderr.write(`set ${missing.map((name) => `${envName(chain)}_${name}`).join(', ')} to the running devnet (stableroute devnet prints them)\n`);
      return 1;
    }
    const { sendDevnetEthereumTransfer } = await import('../devnet/ethereum-transfer.js');
    txIds = await sendDevnetEthereumTransfer(
      {
        rpcUrl: rpcUrl!,
        usdcAddress: usdcAddress as Address,
        ...(amounts.usdt > 0n ? { usdtAddress: otherTokenAddress(chain, 'USDT') } : {}),
        ...(amounts.pyusd > 0n ? { pyusdAddress: otherTokenAddress(chain, 'PYUSD') } : {}),
      },
      {
        to: values.to as Address,
        ...(values.from ? { from: values.from as Address } : {}),
        usdcMicros: amounts.usdc,
        usdtMicros: amounts.usdt,
        pyusdMicros: amounts.pyusd,
        wei: amounts.native,
      },
    );
  } else {
    const { rpcUrl } = settings;
    if (!rpcUrl) {
      process.stderr.write('set SOLANA_RPC_URL to the running devnet (stableroute devnet prints it)\n');
      return 1;
    }
    const { sendDevnetSolanaTransfers } = await import('../devnet/solana-transfer.js');
    txIds = (
      await sendDevnetSolanaTransfers(rpcUrl, [
        {
          to: values.to,
          ...(values.from ? { from: values.from } : {}),
          usdcMicros: amounts.usdc,
          usdtMicros: amounts.usdt,
          pyusdMicros: amounts.pyusd,
          lamports: amounts.native,
        },
      ])
    ).signatures;
  }
  process.stdout.write(values.json ? `${JSON.stringify({ chain, tx_ids: txIds })}\n` : `${txIds.map((id) => `${chain} transfer ${id}`).join('\n')}\n`);
  return 0;
}

interface FundAmounts {
  usdc: bigint;
  usdt: bigint;
  pyusd: bigint;
  native: bigint;
}

/** --usdc and --native as `simulate transfer` reads them, and --usdt and --pyusd beside them (6 decimals each). */
function fundAmounts(chain: Chain, values: { usdc?: string; usdt?: string; pyusd?: string; native?: string }): FundAmounts | string {
  const others = { usdt: 0n, pyusd: 0n };
  for (const token of ['usdt', 'pyusd'] as const) {
    const text = values[token];
    if (text === undefined) continue;
    try {
      others[token] = parseUnits(text, TOKEN_DECIMALS);
    } catch (error) {
      if (error instanceof AmountError || error instanceof RangeError) return `not an amount: ${error.message}`;
      throw error;
    }
    if (others[token] <= 0n) return 'amounts must be positive';
  }
  if (values.usdc === undefined && values.native === undefined) {
    if (others.usdt === 0n && others.pyusd === 0n) return 'give --usdc N, --usdt N, --pyusd N, --native N or several';
    return { usdc: 0n, native: 0n, ...others };
  }
  const amounts = transferAmounts(chain, values.usdc, values.native);
  if (typeof amounts === 'string') return amounts;
  return { ...amounts, ...others };
}

/**
 * NAME_USDT_ADDRESS and NAME_PYUSD_ADDRESS as `stableroute devnet` printed them. Read here, from the environment,
 * until the token configuration (issue 40 item 1) carries them in Config beside NAME_USDC_ADDRESS.
 */
function otherTokenAddress(chain: Chain, token: 'USDT' | 'PYUSD'): Address | undefined {
  const value = process.env[`${envName(chain)}_${token}_ADDRESS`];
  return value && /^0x[0-9a-fA-F]{40}$/.test(value) ? (value as Address) : undefined;
}
