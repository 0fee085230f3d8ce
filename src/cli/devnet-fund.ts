// `stableroute devnet fund`: real transfers on a running devnet (the environment `stableroute devnet` printed), so
// the service's deposit scanner sees them as it would on a network. Without --from: test USDC minted (Ethereum) or
// sent from a fresh faucet address (Solana), and native currency sent. With --from: sent AS that address (anvil
// impersonation; on the Solana devnet, processed without signature verification), e.g. a payout's recipient
// returning it. Exits 0 once the transfer is on chain.
import { parseArgs } from 'node:util';
import type { Address } from 'viem';
import { envName, type Config } from '../config.js';
import { isChainIn } from '../domain/chain.js';
import { isWellFormedAddress } from '../domain/addresses.js';
import { transferAmounts } from './transfers.js';
import { usage } from './exits.js';

const DEVNET_FUND_USAGE = `usage: stableroute devnet fund --chain NAME --to ADDRESS [--usdc N] [--native N] [--from ADDRESS] [--json]
       against the running devnet chain NAME of CHAINS: NAME_RPC_URL + NAME_USDC_ADDRESS (EVM), or SOLANA_RPC_URL
`;

export async function devnetFundCommand(args: string[], config: Config): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      chain: { type: 'string' },
      to: { type: 'string' },
      from: { type: 'string' },
      usdc: { type: 'string' },
      native: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  if (positionals.length > 0) return usage(DEVNET_FUND_USAGE);
  const chain = values.chain;
  if (!isChainIn(config.chainNames, chain)) return usage(DEVNET_FUND_USAGE, `--chain must be one of CHAINS (${config.chainNames.join(', ')})`);
  if (values.to === undefined || !isWellFormedAddress(chain, values.to)) return usage(DEVNET_FUND_USAGE, `--to must be a ${chain} address`);
  if (values.from !== undefined && !isWellFormedAddress(chain, values.from)) return usage(DEVNET_FUND_USAGE, `--from must be a ${chain} address`);
  const amounts = transferAmounts(chain, values.usdc, values.native);
  if (typeof amounts === 'string') return usage(DEVNET_FUND_USAGE, amounts);

  let txIds: string[];
  const settings = config.chains[chain]!;
  if (settings.family === 'evm') {
    const { rpcUrl, usdcAddress } = settings;
    if (!rpcUrl || !usdcAddress) {
      process.stderr.write(`set ${envName(chain)}_RPC_URL and ${envName(chain)}_USDC_ADDRESS to the running devnet (stableroute devnet prints them)\n`);
      return 1;
    }
    const { sendDevnetEthereumTransfer } = await import('../devnet/ethereum-transfer.js');
    txIds = await sendDevnetEthereumTransfer(
      { rpcUrl, usdcAddress: usdcAddress as Address },
      { to: values.to as Address, ...(values.from ? { from: values.from as Address } : {}), usdcMicros: amounts.usdc, wei: amounts.native },
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
        { to: values.to, ...(values.from ? { from: values.from } : {}), usdcMicros: amounts.usdc, lamports: amounts.native },
      ])
    ).signatures;
  }
  process.stdout.write(values.json ? `${JSON.stringify({ chain, tx_ids: txIds })}\n` : `${txIds.map((id) => `${chain} transfer ${id}`).join('\n')}\n`);
  return 0;
}
