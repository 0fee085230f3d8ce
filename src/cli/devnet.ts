// `stableroute devnet`: local chains for trying real-chain mode on a laptop. An anvil node (real binary from npm)
// with a 6-decimal USDC token and a funded treasury, and a Solana JSON-RPC endpoint backed by LiteSVM with a USDC
// mint and a funded treasury. Runs until SIGINT/SIGTERM.
import { parseArgs } from 'node:util';
import pino from 'pino';

export async function devnetCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      json: { type: 'boolean', default: false },
      'ethereum-port': { type: 'string' },
      'solana-port': { type: 'string' },
      'block-time': { type: 'string', default: '1' },
      confirmations: { type: 'string', default: '2' },
    },
  });
  const port = (name: 'ethereum-port' | 'solana-port') => (values[name] ? Number(values[name]) : undefined);
  const blockTimeSeconds = Number(values['block-time']);
  const confirmations = Number(values.confirmations);
  if (!(blockTimeSeconds > 0) || !Number.isInteger(confirmations) || confirmations < 1) {
    process.stderr.write('usage: stableroute devnet [--json] [--ethereum-port N] [--solana-port N] [--block-time S] [--confirmations N]\n');
    return 2;
  }
  const log = pino({ level: 'warn' }, pino.destination(2));
  const { startEthereumDevnet } = await import('../devnet/ethereum.js');
  const { startSolanaDevnet } = await import('../devnet/solana.js');
  // Blocks keep coming (block time), so Ethereum transfers reach ETHEREUM_CONFIRMATIONS by themselves.
  const ethereum = await startEthereumDevnet({ port: port('ethereum-port'), blockTimeSeconds, logger: log });
  let solana: Awaited<ReturnType<typeof startSolanaDevnet>>;
  try {
    solana = await startSolanaDevnet({ port: port('solana-port'), logger: log });
  } catch (error) {
    await ethereum.stop();
    throw error;
  }
  const env = {
    ETHEREUM_ADAPTER: 'rpc',
    ETHEREUM_RPC_URL: ethereum.rpcUrl,
    ETHEREUM_USDC_ADDRESS: ethereum.usdcAddress,
    ETHEREUM_TREASURY_KEY: ethereum.treasuryKey,
    ETHEREUM_CONFIRMATIONS: String(confirmations),
    SOLANA_ADAPTER: 'rpc',
    SOLANA_RPC_URL: solana.rpcUrl,
    SOLANA_USDC_MINT: solana.usdcMint,
    SOLANA_TREASURY_KEY: solana.treasuryKey,
  };
  if (values.json) process.stdout.write(`${JSON.stringify(env)}\n`);
  else {
    process.stdout.write('Local chains are running. Point stableroute at them with:\n\n');
    for (const [key, value] of Object.entries(env)) process.stdout.write(`export ${key}=${value}\n`);
    process.stdout.write(`\nEthereum treasury ${ethereum.treasuryAddress}, Solana treasury ${solana.treasuryAddress}. Ctrl-C stops.\n`);
  }
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await Promise.allSettled([ethereum.stop(), solana.stop()]);
  return 0;
}
