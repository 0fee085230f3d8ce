// The confirmation worker: a round over every open attempt (src/core/lifecycle/confirm.ts) every
// CONFIRMATION_POLL_SECONDS at the latest, and as soon as a chain's head moves: each chain's head is read every
// CONFIRMATION_HEAD_POLL_SECONDS, and a new block or slot wakes the round, so a transfer is settled within about a
// second of its finality.
import { chainsThatMoved, confirmRound, type ConfirmationDeps, type ConfirmationSummary } from '../../core/lifecycle/confirm.js';
import type { Chain } from '../../domain/chain.js';
import { every, type Periodic } from '../periodic.js';

export type { ConfirmationDeps, ConfirmationSummary };

/** One round now (tests and the loop below). */
export function confirmOnce(deps: ConfirmationDeps): Promise<ConfirmationSummary> {
  return confirmRound(deps);
}

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
