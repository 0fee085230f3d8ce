// Money from outside on the simulated chains: a deposit into a treasury (USDC or native), and a recipient sending a
// settled payout back (a return, which the deposit scanner matches to its payment as a refund), sometimes a second
// time, sometimes only part of it (booked as funding, for an operator to attach), and sometimes while an operator
// attaches an earlier part to that payout (the race the intent's row lock orders, src/core/treasury/deposits/attach.ts).
import { recordExternalTransfers } from '../../src/chains/simulated/external-transfer.js';
import { scanChain } from '../../src/core/treasury/deposits/scan.js';
import { advance } from '../outside/clock.js';
import { expectNoServerError } from './env.js';
import type { Chain } from '../../src/domain/chain.js';
import type { ExternalTransferInput } from '../chain/index.js';
import type { OpEnv } from './env.js';
import { chosen, inRunOrder } from './model.js';

const OUTSIDE: Record<'ethereum' | 'solana', string> = {
  ethereum: '0x1111111111111111111111111111111111111111',
  solana: 'Gh9ZwEmdLJ8DscKNTkTqPbNwLNNBjuSzaG9Vp2KGtKJr',
};

/** A transfer on the chain world when there is one, else on the built-in simulated network. */
async function sendFromOutside(env: OpEnv, transfer: ExternalTransferInput): Promise<void> {
  const { world } = env;
  if (world.chains) world.chains.externalTransfer(transfer);
  else await recordExternalTransfers(world.pool, world.config.simSeed, [{ ...transfer, at: world.clock.now() }]);
}

export async function deposit(env: OpEnv, draws: readonly number[]): Promise<string> {
  const { world } = env;
  const chain = draws[0]! % 2 === 0 ? ('ethereum' as const) : ('solana' as const);
  const native = draws[1]! % 5 === 0;
  const amountUnits = native ? BigInt(1 + (draws[2]! % 10)) * 10n ** BigInt(world.config.chains[chain]!.nativeDecimals) : BigInt(1 + (draws[2]! % 2_000)) * 1_000_000n;
  await sendFromOutside(env, { chain, from: OUTSIDE[chain], to: world.adapters[chain]!.treasuryAddress(), currency: native ? 'native' : 'USDC', amountUnits });
  return `deposit ${amountUnits} ${native ? 'native' : 'USDC'} on ${chain}`;
}

/** How a payout_return goes, by its second draw: mostly a plain return; now and then a partial one, or the race. */
const RETURN_KINDS = ['full', 'full', 'full', 'again', 'partial', 'partial', 'attach_race'] as const;

export async function payoutReturn(env: OpEnv, draws: readonly number[]): Promise<string> {
  const how = RETURN_KINDS[draws[1]! % RETURN_KINDS.length]!;
  if (how === 'attach_race') return attachRace(env, draws);
  const { world } = env;
  // 'again': a recipient paying a payout back a second time (the first return booked as its refund, or not yet).
  const { rows } = await world.pool.query<{ id: string; chain: Chain; to: string; amount: string }>(
    `SELECT id, selected_chain AS chain, destination_address AS to, amount_micros::text AS amount FROM payment_intents pi
      WHERE status = 'settled' AND kind = 'payout'
        AND ($1 OR EXISTS (SELECT 1 FROM inbound_transfers r WHERE r.payment_intent_id = pi.id))`,
    [how !== 'again'],
  );
  const ordered = inRunOrder(env.model, rows.map((r) => r.id));
  const id = chosen(ordered, draws[0]!);
  if (!id) return `nothing settled to return (${how})`;
  const row = rows.find((r) => r.id === id)!;
  // A partial return is not the payout's amount, so the scanner books it as funding; an operator may attach it.
  const amount = how === 'partial' ? BigInt(row.amount) / 2n : BigInt(row.amount);
  if (amount <= 0n) return 'nothing to return';
  await sendFromOutside(env, { chain: row.chain, from: row.to, to: world.adapters[row.chain]!.treasuryAddress(), currency: 'USDC', amountUnits: amount });
  env.touched.add(id);
  return `${how} return of #${env.model.byId.get(id)?.index}`;
}

/**
 * An operator attaches a part a recipient sent back earlier (booked as funding) to its settled payout as the refund,
 * while the recipient's full return of that payout is being scanned by the other process. The order is forced, as
 * it can fall in production: the scan has read the payout as a refund candidate (no refund yet) before the attach
 * commits, and locks the payout after it. The simulator holds the payout's row lock while both line up behind it,
 * attach first. The scan must then see the refund the attach booked and book the return as funding.
 */
async function attachRace(env: OpEnv, draws: readonly number[]): Promise<string> {
  const { world } = env;
  const { rows } = await world.pool.query<{ id: string; chain: Chain; to: string; amount: string; tx_id: string }>(
    `SELECT DISTINCT ON (pi.id) pi.id, pi.selected_chain AS chain, pi.destination_address AS to, pi.amount_micros::text AS amount, t.tx_id
       FROM inbound_transfers t JOIN payment_intents pi
         ON pi.selected_chain = t.chain AND pi.destination_address = t.from_address AND pi.amount_micros >= t.amount
      WHERE t.payment_intent_id IS NULL AND t.currency = 'USDC' AND t.match_status <> 'attached' AND pi.status = 'settled' AND pi.kind = 'payout'
        AND NOT EXISTS (SELECT 1 FROM inbound_transfers r WHERE r.payment_intent_id = pi.id)
      ORDER BY pi.id, t.id`,
  );
  const ordered = inRunOrder(env.model, rows.map((r) => r.id));
  const id = chosen(ordered, draws[0]!);
  if (!id) return 'no part returned to attach';
  const row = rows.find((r) => r.id === id)!;
  const adapter = world.adapters[row.chain]!;
  await sendFromOutside(env, { chain: row.chain, from: row.to, to: adapter.treasuryAddress(), currency: 'USDC', amountUnits: BigInt(row.amount) });
  // The full return becomes final before the scan that races the attach.
  await advance(world, Math.ceil(adapter.typicalFinalitySeconds) + 15);
  world.chains?.tick();
  env.touched.add(id);
  const holder = await world.pool.connect();
  let attach: Promise<{ statusCode: number; body: string }> | null = null;
  let scan: Promise<unknown> | null = null;
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM payment_intents WHERE id = $1 FOR UPDATE', [id]);
    const waiting = () => holder.query<{ n: number }>("SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").then((r) => r.rows[0]!.n);
    const lineUp = async (n: number, settled: () => boolean) => {
      const deadline = Date.now() + 5_000;
      while (Date.now() < deadline && !settled() && (await waiting()) < n) await new Promise((resolve) => setImmediate(resolve));
    };
    let attachDone = false;
    attach = world.app.inject({ method: 'POST', url: `/admin/payments/${id}/refund`, payload: { tx_id: row.tx_id } }).finally(() => (attachDone = true));
    await lineUp(1, () => attachDone);
    let scanDone = false;
    scan = scanChain({ ...world.second, log: world.second.log }, row.chain, {}).then(
      () => undefined,
      (error: unknown) => error,
    ).finally(() => (scanDone = true));
    await lineUp(2, () => scanDone || attachDone);
  } finally {
    await holder.query('COMMIT').catch(() => undefined);
    holder.release();
  }
  const answer = await attach!;
  const scanned = await scan!;
  expectNoServerError(env, `attach to ${id}`, answer);
  return `attach race on #${env.model.byId.get(id)?.index}: attach ${answer.statusCode}${scanned ? `, scan threw ${(scanned as Error).message}` : ''}`;
}
