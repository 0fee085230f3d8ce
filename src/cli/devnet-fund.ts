// `stableroute devnet fund`: real transfers on a running devnet (the environment `stableroute devnet` printed), so
// the service's deposit scanner sees them as it would on a network. Without --from: test USDC minted (Ethereum) or
// sent from a fresh faucet address (Solana), and native currency sent. With --from: sent AS that address (anvil
// impersonation; on the Solana devnet, processed without signature verification), e.g. a payout's recipient
// returning it. Exits 0 once the transfer is on chain.
import { parseArgs } from 'node:util';
import type { Address } from 'viem';
import type { Config } from '../config.js';
import { isChain } from '../domain/chain.js';
import { isWellFormedAddress } from '../domain/addresses.js';
import { transferAmounts } from './transfers.js';
import { usage } from './exits.js';

const DEVNET_FUND_USAGE = `usage: stableroute devnet fund --chain ethereum|solana --to ADDRESS [--usdc N] [--native N] [--from ADDRESS] [--json]
       against the running devnet named by ETHEREUM_RPC_URL + ETHEREUM_USDC_ADDRESS or SOLANA_RPC_URL
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
  if (!isChain(chain)) return usage(DEVNET_FUND_USAGE, '--chain must be ethereum or solana');
  if (values.to === undefined || !isWellFormedAddress(chain, values.to)) return usage(DEVNET_FUND_USAGE, `--to must be a ${chain} address`);
  if (values.from !== undefined && !isWellFormedAddress(chain, values.from)) return usage(DEVNET_FUND_USAGE, `--from must be a ${chain} address`);
  const amounts = transferAmounts(chain, values.usdc, values.native);
  if (typeof amounts === 'string') return usage(DEVNET_FUND_USAGE, amounts);

  let txIds: string[];
  if (chain === 'ethereum') {
    const { rpcUrl, usdcAddress } = config.ethereum;
    if (!rpcUrl || !usdcAddress) {
      process.stderr.write('set ETHEREUM_RPC_URL and ETHEREUM_USDC_ADDRESS to the running devnet (stableroute devnet prints them)\n');
      return 1;
    }
    const { sendDevnetEthereumTransfer } = await import('../devnet/ethereum-transfer.js');
    txIds = await sendDevnetEthereumTransfer(
      { rpcUrl, usdcAddress: usdcAddress as Address },
      { to: values.to as Address, ...(values.from ? { from: values.from as Address } : {}), usdcMicros: amounts.usdc, wei: amounts.native },
    );
  } else {
    const { rpcUrl } = config.solana;
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
