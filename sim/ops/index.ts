// The generator: each operation's kind drawn by weight from the seed, with four raw numbers its targets and amounts
// come from. The draws never depend on the service's state (what an operation finds decides only what the numbers
// name), so one seed always runs the same operations in the same order.
import type { Rng } from '../rng.js';
import { advance, JUMPS, type Jump } from '../outside/clock.js';
import { deposit, payoutReturn } from './chain.js';
import type { OpEnv } from './env.js';
import { createIntent, payoutBatch, quote, replay } from './merchant.js';
import { cancel, decideApproval, redeliver, resolve, withdraw } from './operator.js';
import { confirmOp, deadLetterOp, executionOp, scanOp, sweepOp, webhooksOp } from './workers.js';

export const OP_WEIGHTS = {
  quote: 6,
  create: 12,
  replay: 3,
  replay_other_body: 1,
  payout_batch: 2,
  execute: 14,
  dead_letters: 1,
  confirm: 10,
  webhooks: 7,
  sweep: 3,
  deposit: 1,
  payout_return: 1,
  scan: 2,
  withdraw: 1,
  approval: 2,
  cancel: 1,
  resolve: 2,
  redeliver: 1,
  sanction: 0.2,
  advance: 10,
} as const;
export type OpKind = keyof typeof OP_WEIGHTS;
export const OP_KINDS = Object.keys(OP_WEIGHTS) as OpKind[];

export interface Op {
  n: number;
  kind: OpKind;
  draws: [number, number, number, number];
}

const DRAW_MAX = 2 ** 30;

export function nextOp(rng: Rng, n: number): Op {
  const kind = rng.weighted(OP_WEIGHTS);
  return { n, kind, draws: [rng.int(0, DRAW_MAX), rng.int(0, DRAW_MAX), rng.int(0, DRAW_MAX), rng.int(0, DRAW_MAX)] };
}

/** Runs one operation; the answer says what it did, for the log of the last operations. */
export async function runOp(env: OpEnv, op: Op): Promise<string> {
  const d = op.draws;
  switch (op.kind) {
    case 'quote':
      return quote(env, d);
    case 'create':
      return createIntent(env, d);
    case 'replay':
      return replay(env, d, true);
    case 'replay_other_body':
      return replay(env, d, false);
    case 'payout_batch':
      return payoutBatch(env, d);
    case 'execute':
      return executionOp(env, d);
    case 'dead_letters':
      return deadLetterOp(env);
    case 'confirm':
      return confirmOp(env, d);
    case 'webhooks':
      return webhooksOp(env);
    case 'sweep':
      return sweepOp(env, d);
    case 'deposit':
      return deposit(env, d);
    case 'payout_return':
      return payoutReturn(env, d);
    case 'scan':
      return scanOp(env);
    case 'withdraw':
      return withdraw(env, d);
    case 'approval':
      return decideApproval(env, d);
    case 'cancel':
      return cancel(env, d);
    case 'resolve':
      return resolve(env, d);
    case 'redeliver':
      return redeliver(env, d);
    case 'sanction': {
      const chain = d[0] % 2 === 0 ? 'ethereum' : 'solana';
      const address = env.world.recipients[chain][d[1] % env.world.recipients[chain].length]!;
      env.world.screening.sanction(address, env.world.clock.now().getTime());
      return `sanctioned a ${chain} recipient`;
    }
    case 'advance': {
      if (env.faults.outside.roll('outside.clock_jump')) {
        const jump = (Object.keys(JUMPS) as Jump[])[d[0] % 3]!;
        await advance(env.world, JUMPS[jump]);
        return `clock jumped past ${jump}`;
      }
      const seconds = 1 + (d[0] % 30);
      await advance(env.world, seconds);
      return `clock +${seconds}s`;
    }
  }
}
