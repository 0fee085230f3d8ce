// The confirmation worker: a round over every open attempt (src/core/payments/confirm/round.ts) every
// CONFIRMATION_POLL_SECONDS at the latest, and as soon as a chain's head moves: each chain's head is read every
// CONFIRMATION_HEAD_POLL_SECONDS, and a new block or slot wakes the round, so a transfer is settled within about a
// second of its finality.
import { chainsThatMoved } from '../core/payments/confirm/heads.js';
import { confirmRound, type ConfirmationDeps } from '../core/payments/confirm/round.js';
import type { Chain } from '../domain/chain.js';
import { every, type Periodic } from './periodic.js';

export function startConfirmationWorker(deps: ConfirmationDeps, options: { pollSeconds: number; headPollSeconds: number }): Periodic {
  const rounds = every('confirmation', options.pollSeconds, () => confirmRound(deps), deps.log);
  const heads = new Map<Chain, string>();
  const watcher = every(
    'confirmation-heads',
    options.headPollSeconds,
    async () => {
      if ((await chainsThatMoved(deps, heads)).length > 0) rounds.wake();
    },
    deps.log,
  );
  return {
    wake: () => rounds.wake(),
    get running() {
      return rounds.running;
    },
    stop: async () => {
      await Promise.all([watcher.stop(), rounds.stop()]);
    },
  };
}
