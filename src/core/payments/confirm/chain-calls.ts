// What the chains say about a page of open attempts, asked outside any lock: one getStatuses call per chain (the
// adapters split further where their node needs it). For an attempt that can never land, the transfers a fee bump or
// a cancel replaced on its nonce are asked about too, one call per chain for the page: one of them may be the payout.
import type { ItemOutcome } from '../../../db/group-commit.js';
import { readReplacedAttempts, type AttemptRow, type OpenAttempt } from '../../../db/queries/attempts.js';
import { signedOf, type TxStatus } from '../../../domain/chain.js';
import { shareOf } from '../../../domain/fee-share.js';
import { transferVerdict, type TransferVerdict } from '../../../domain/transfer-verdict.js';
import type { ConfirmationDeps } from './round.js';

/**
 * A replaced attempt of the same intent that the chain reports final, or still able to land; otherwise the fee that the
 * replaced ones which landed and failed (a batch a recipient reverted) spent, which nothing else books; null: none did.
 */
export type Sibling = { attempt: AttemptRow; feeNative: bigint } | 'pending' | { spentFeeNative: bigint } | null;

/** Each attempt with the chain's verdict on it; the attempts of a chain that cannot be asked are left out (logged). */
export async function askAboutAttempts(deps: ConfirmationDeps, page: readonly OpenAttempt[]): Promise<{ attempt: OpenAttempt; verdict: TransferVerdict }[]> {
  const asked = await Promise.all(
    Object.entries(deps.adapters).map(async ([chain, adapter]) => {
      const attempts = page.filter((a) => a.chain === chain);
      if (attempts.length === 0) return [];
      try {
        const statuses = await adapter.getStatuses(attempts.map(signedOf));
        return attempts.map((attempt, i) => ({ attempt, verdict: transferVerdict(statuses[i]!, { chain, share: shareOf(attempt) }) }));
      } catch (error) {
        deps.log.error({ err: error, chain }, 'confirmation: the chain could not be asked; trying again next round');
        return [];
      }
    }),
  );
  return asked.flat();
}

/** What the chain says about each attempt's replaced siblings; a chain that cannot be asked fails its attempts. */
export async function askAboutSiblings(deps: ConfirmationDeps, attempts: readonly AttemptRow[]): Promise<ItemOutcome<Sibling>[]> {
  const answers: ItemOutcome<Sibling>[] = attempts.map(() => ({ ok: true, value: null }));
  if (attempts.length === 0) return answers;
  const replaced = await readReplacedAttempts(deps.pool, attempts.map((a) => a.payment_intent_id));
  await Promise.all(
    Object.entries(deps.adapters).map(async ([chain, adapter]) => {
      const asking = attempts.flatMap((a, k) => (a.chain === chain && replaced.get(a.payment_intent_id)!.length > 0 ? [k] : []));
      const siblings = asking.map((k) => replaced.get(attempts[k]!.payment_intent_id)!);
      if (siblings.length === 0) return;
      let statuses: TxStatus[];
      try {
        statuses = await adapter.getStatuses(siblings.flat().map(signedOf));
      } catch (error) {
        for (const k of asking) answers[k] = { ok: false, error };
        return;
      }
      let next = 0;
      asking.forEach((k, j) => {
        const own = statuses.slice(next, (next += siblings[j]!.length));
        answers[k] = { ok: true, value: landedSibling(siblings[j]!, own) };
      });
    }),
  );
  return answers;
}

/**
 * The first of the siblings (oldest first) the chain reports final, or 'pending' when one can still land first; else
 * the fees of those that landed and failed.
 */
function landedSibling(siblings: readonly AttemptRow[], statuses: readonly TxStatus[]): Sibling {
  let spentFeeNative = 0n;
  for (const [i, attempt] of siblings.entries()) {
    const verdict = transferVerdict(statuses[i]!, { chain: attempt.chain, share: shareOf(attempt) });
    if (verdict.kind === 'final') return { attempt, feeNative: verdict.feeNative };
    if (verdict.kind === 'included' || verdict.kind === 'pending') return 'pending';
    if (verdict.kind === 'cannot_land' && verdict.onChain) spentFeeNative += verdict.feeNative;
  }
  return spentFeeNative > 0n ? { spentFeeNative } : null;
}
