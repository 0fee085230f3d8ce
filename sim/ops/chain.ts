// Money from outside on the simulated chains: a deposit into a treasury (USDC or native), and a recipient sending a
// settled payout back (a return, which the deposit scanner matches to its payment as a refund).
import { recordExternalTransfers } from '../../src/chains/simulated/external-transfer.js';
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

export async function payoutReturn(env: OpEnv, draws: readonly number[]): Promise<string> {
  const { world } = env;
  const { rows } = await world.pool.query<{ id: string; chain: Chain; to: string; amount: string }>(
    `SELECT id, selected_chain AS chain, destination_address AS to, amount_micros::text AS amount FROM payment_intents
      WHERE status = 'settled' AND kind = 'payout'`,
  );
  const ordered = inRunOrder(env.model, rows.map((r) => r.id));
  const id = chosen(ordered, draws[0]!);
  if (!id) return 'nothing settled to return';
  const row = rows.find((r) => r.id === id)!;
  await sendFromOutside(env, { chain: row.chain, from: row.to, to: world.adapters[row.chain]!.treasuryAddress(), currency: 'USDC', amountUnits: BigInt(row.amount) });
  env.touched.add(id);
  return `return of #${env.model.byId.get(id)?.index}`;
}
