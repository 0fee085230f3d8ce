// `stableroute devnet fund --chain solana`: asks the running LiteSVM devnet (its devnet-only method
// stableroute_transfer, src/devnet/solana-rpc/devnet-methods.ts) for real transfers, processed at once, all in one slot.
const RPC_TIMEOUT_MS = 10_000;

export interface DevnetSolanaTransfer {
  to: string;
  /** Sends as this address (no signature verification on the devnet); default: a fresh faucet address. */
  from?: string;
  usdcMicros: bigint;
  lamports: bigint;
  /** USDT (SPL Token) and PYUSD (Token-2022) too; default none. */
  usdtMicros?: bigint;
  pyusdMicros?: bigint;
  /** Sends it this many times (1 to 1000, default 1), each a transaction of its own. */
  repeat?: number;
}

export async function sendDevnetSolanaTransfers(rpcUrl: string, transfers: readonly DevnetSolanaTransfer[]): Promise<{ slot: number; signatures: string[] }> {
  const response = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    signal: AbortSignal.timeout(RPC_TIMEOUT_MS),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'stableroute_transfer',
      params: [
        {
          transfers: transfers.map((t) => ({
            to: t.to,
            ...(t.from ? { from: t.from } : {}),
            usdc_micros: t.usdcMicros.toString(),
            ...(t.usdtMicros === undefined ? {} : { usdt_micros: t.usdtMicros.toString() }),
            ...(t.pyusdMicros === undefined ? {} : { pyusd_micros: t.pyusdMicros.toString() }),
            lamports: t.lamports.toString(),
            ...(t.repeat === undefined ? {} : { repeat: t.repeat }),
          })),
        },
      ],
    }),
  });
  const body = (await response.json()) as { result?: { slot: number; signatures: string[] }; error?: { code: number; message: string } };
  if (body.error?.code === -32601) throw new Error(`${rpcUrl} is not a stableroute Solana devnet (no stableroute_transfer method)`);
  if (body.error || !body.result) throw new Error(`the devnet refused the transfer: ${body.error?.message ?? 'no result'}`);
  return body.result;
}
