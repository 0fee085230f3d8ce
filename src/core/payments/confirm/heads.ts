// What wakes a confirmation round early: a chain's head moved (a new block or slot), read every
// CONFIRMATION_HEAD_POLL_SECONDS, so a transfer is settled within about a second of its finality.
import type { Chain } from '../../../domain/chain.js';
import type { ConfirmationDeps } from './round.js';

/** Chains whose head moved since `last` (updated in place); a chain that cannot be asked counts as unmoved. */
export async function chainsThatMoved(deps: Pick<ConfirmationDeps, 'adapters' | 'log'>, last: Map<Chain, string>): Promise<Chain[]> {
  const moved: Chain[] = [];
  await Promise.all(
    Object.entries(deps.adapters).map(async ([chain, adapter]) => {
      try {
        const head = await adapter.head();
        if (last.get(chain) !== head) moved.push(chain);
        last.set(chain, head);
      } catch (error) {
        deps.log.debug({ err: error, chain }, 'confirmation: head unavailable');
      }
    }),
  );
  return moved;
}
