// An unsafe failover (issue 36): a primary with an ASYNCHRONOUS standby that fell behind. Payouts on both devnet chains
// are created and replicated, then the stream is cut and a worker signs, sends and lands them while only the primary
// records it; the primary dies (-m immediate), the standby is promoted and the service starts on it with books that
// lack every one of those payouts. The chains' treasuries say otherwise: the service must pay nothing twice (counted
// per recipient on chain), hold each chain whose transactions its books do not know with a `books_behind_chain` alert,
// keep paying on a chain an operator cleared while another is still held, and resume a chain once an operator
// attached its unknown transactions to the payments they paid.
import { getBase58Decoder } from '@solana/kit';
import { randomBytes } from 'node:crypto';
import { getAddress } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEthereumDevnet, type EthereumDevnet } from '../../src/devnet/ethereum.js';
import { startSolanaDevnet, type SolanaDevnet } from '../../src/devnet/solana.js';
import { ethereumUsdcOf, solanaUsdcOf } from '../helpers/chain-balances.js';
import { devnetEnv } from '../helpers/devnet.js';
import { pay } from '../helpers/devnet-cli.js';
import { startFailoverPair, type FailoverPair } from '../helpers/failover-pair.js';
import { freePort, killAll, runCommand, startService, waitFor, waitHealthy, type ServiceProcess } from '../helpers/process.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const SECRET = 'failover-async-secret';
const DATABASE = 'stableroute';
/** Payouts per chain in the window the standby never received. */
const PER_CHAIN = 6;

let eth: EthereumDevnet;
let sol: SolanaDevnet;
let pair: FailoverPair;
let receiver: Receiver;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  [eth, sol, pair, receiver] = await Promise.all([
    startEthereumDevnet({ blockTimeSeconds: 1 }),
    startSolanaDevnet({ slotMs: 100, finalizeAfterSlots: 4 }),
    startFailoverPair({ synchronous: false }),
    startReceiver(SECRET),
  ]);
}, 120_000);
afterAll(async () => {
  await killAll(processes);
  await Promise.all([eth?.stop(), sol?.stop(), pair?.remove(), receiver?.close()]);
});

function env(url: string, port: number): Record<string, string> {
  return devnetEnv(eth, sol, {
    DATABASE_URL: url,
    PORT: String(port),
    HOST: '127.0.0.1',
    WEBHOOK_SIGNING_SECRET: SECRET,
    DEV_MERCHANT_WEBHOOK_URL: receiver.url,
    CONFIRMATION_POLL_SECONDS: '0.5',
    HEALTH_COLLECT_SECONDS: '1',
    BOOKS_CHECK_SECONDS: '0.5',
  });
}

function start(args: string[], url: string, port: number): ServiceProcess {
  const service = startService(args, env(url, port));
  processes.push(service);
  return service;
}

async function stop(service: ServiceProcess): Promise<void> {
  service.child.kill('SIGKILL');
  await service.exited;
}

interface Payout {
  chain: 'ethereum' | 'solana';
  to: string;
  amountMicros: bigint;
  id: string;
}

const paidOnChain = (p: Payout) =>
  p.chain === 'ethereum' ? ethereumUsdcOf(eth.rpcUrl, eth.usdcAddress, p.to) : solanaUsdcOf(sol.rpcUrl, sol.usdcMint, p.to);

describe('a standby promoted behind its primary', () => {
  it('pays nothing twice: the chains whose treasuries moved without the books are held until an operator accounts for it', { timeout: 300_000 }, async () => {
    const primaryUrl = pair.primary.url(DATABASE);
    const standbyUrl = pair.standby.url(DATABASE);

    // 1. The payouts are created through the api alone (no worker yet), and the standby has them.
    const apiPort = await freePort();
    const api = start(['api'], primaryUrl, apiPort);
    await waitHealthy(`http://127.0.0.1:${apiPort}`, api, 120_000);
    const payouts: Payout[] = [];
    for (let i = 0; i < 2 * PER_CHAIN; i++) {
      const chain = i % 2 === 0 ? 'ethereum' : 'solana';
      const to = chain === 'ethereum' ? getAddress(`0x${randomBytes(20).toString('hex')}`) : getBase58Decoder().decode(randomBytes(32));
      const amountMicros = BigInt(2_000_000 + i * 10_000);
      const destination = chain === 'ethereum' ? { ethereum_address: to } : { solana_address: to };
      const id = await pay(`http://127.0.0.1:${apiPort}`, Number(amountMicros) / 1e6, destination, `lost-${i}`);
      payouts.push({ chain, to, amountMicros, id });
    }
    await pair.caughtUp();

    // 2. The standby falls behind for good; a worker pays everything while only the primary records it.
    await pair.standby.cutReplication();
    const worker = start(['worker'], primaryUrl, await freePort());
    await waitFor(
      'every payout settled on the primary',
      async () => {
        const rows = await pair.primary.query<{ n: number }>("SELECT COUNT(*)::int AS n FROM payment_intents WHERE status = 'settled'", [], DATABASE);
        return rows[0]!.n === payouts.length;
      },
      120_000,
      250,
    );
    for (const p of payouts) expect(await paidOnChain(p), `${p.chain} ${p.to} paid once before the failover`).toBe(p.amountMicros);

    // 3. The primary dies; the standby, which never saw a signature, is promoted; the service starts on it.
    await Promise.all([stop(api), stop(worker)]);
    await pair.primary.stopImmediately();
    await pair.standby.promote();
    const lost = await pair.standby.query<{ n: number }>("SELECT COUNT(*)::int AS n FROM payment_attempts", [], DATABASE);
    expect(lost[0]!.n, 'the promoted standby lacks every signature').toBe(0);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const serve = start(['serve'], standbyUrl, port);
    await waitHealthy(base, serve, 120_000);
    // Transactions signed before the failover could still land until their blockhashes expire: the chain moves past them.
    sol.advanceSlots(200);

    // 4. Either the chains are held, or (before issue 36) the service pays the "unsent" payouts again.
    const outcome = await waitFor(
      'both chains held with an alert, or the payouts settled again',
      async () => {
        const alerts = await pair.standby.query<{ chain: string }>(
          "SELECT chain FROM operator_alerts WHERE kind = 'books_behind_chain' AND status = 'open'",
          [],
          DATABASE,
        ).catch(() => []);
        if (alerts.length === 2) return 'held';
        const settled = await pair.standby.query<{ n: number }>("SELECT COUNT(*)::int AS n FROM payment_intents WHERE status = 'settled'", [], DATABASE);
        return settled[0]!.n === payouts.length ? 'paid again' : null;
      },
      120_000,
      250,
    );
    const paidTwice = [];
    for (const p of payouts) if ((await paidOnChain(p)) !== p.amountMicros) paidTwice.push(`${p.chain} ${p.to}`);
    expect(paidTwice, `recipients paid twice (${outcome})`).toEqual([]);
    expect(outcome).toBe('held');

    const verify = await runCommand(['ledger', 'verify'], { DATABASE_URL: standbyUrl });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });
});
