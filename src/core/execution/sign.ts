// The signatures of a batch, one transaction per chain. Every signature of a chain takes its nonce (the simulated
// chain's sequence, Ethereum's chain_nonces row) under a lock held to the commit, so the batch's payments of one chain
// are re-checked under their locks, their debits posted, and only then signed, last, so the nonce stays locked only
// for the signatures and the one commit (decision 137). A transaction that throws is rolled back whole (nothing was
// sent: bytes leave only after their attempt commits) and its payments are signed again one by one, so a failure
// stays its own payment's.
import type { PreparedTransfer } from '../../chains/port.js';
import type { ItemOutcome } from '../../db/group-commit.js';
import { withBatchTransaction } from '../../db/pool.js';
import type { PaymentIntentRow } from '../../db/queries/intents.js';
import type { SignedTransfer } from '../../domain/chain.js';
import { isAsLeft } from '../../domain/execution.js';
import { movements } from '../../ledger/movements.js';
import { intentsWithDebit, postMany } from '../../ledger/store.js';
import { CHANGED } from '../lifecycle/changed.js';
import { signAttempts } from '../lifecycle/sign-attempts.js';
import { lockForRecheck } from './recheck.js';
import type { ExecutionDeps, ExecutionRun } from './run.js';

export interface ToSign {
  run: ExecutionRun;
  intent: PaymentIntentRow;
  prepared: PreparedTransfer;
}

export type Signed = { intent: PaymentIntentRow; attemptId: string; transfer: SignedTransfer };

/** Signs each run's prepared transfer as a new attempt; CHANGED where the payment is no longer as its run left it. */
export async function signTransfers(deps: ExecutionDeps, items: readonly ToSign[]): Promise<ItemOutcome<Signed | typeof CHANGED>[]> {
  const outcomes: ItemOutcome<Signed | typeof CHANGED>[] = new Array(items.length);
  await Promise.all(
    Object.entries(deps.adapters).map(async ([chain, adapter]) => {
      const ofChain = items.flatMap((item, k) => (item.intent.selected_chain === chain ? [{ item, k }] : []));
      const signed = await withBatchTransaction(
        deps.pool,
        ofChain.map((c) => c.item),
        async (tx, batch) => {
          const now = deps.clock.now();
          // 1. Each payment under its lock, as its run left it: still broadcasting under its lease, nothing signed yet.
          const locked = await lockForRecheck(tx, batch.map((i) => i.run), { lockAttempts: false });
          const ready = batch.flatMap((item, k) => {
            const { intent, facts } = locked[k]!;
            return intent && isAsLeft(facts, null) ? [{ k, intent, prepared: item.prepared }] : [];
          });
          // 2. One debit per intent, at its first signed transfer (later attempts move the same funds), in one posting.
          const debited = await intentsWithDebit(tx, ready.map((r) => r.intent.id));
          await postMany(
            tx,
            ready
              .filter((r) => !debited.has(r.intent.id))
              .map((r) => ({ movement: movements.debit(chain, r.intent.amount_micros), context: { paymentIntentId: r.intent.id, at: now } })),
          );
          // 3. The signatures last: the chain's nonce stays locked from the first of them to the commit.
          const attempts = await signAttempts(tx, adapter, ready, now);
          const answers: (Signed | typeof CHANGED)[] = batch.map(() => CHANGED);
          ready.forEach((r, j) => (answers[r.k] = { intent: r.intent, attemptId: attempts[j]!.id, transfer: attempts[j]!.signed }));
          return answers;
        },
        (error, batch) => deps.log.warn({ err: error, size: batch.length, chain }, 'signature batch failed; signing its payments one by one'),
      );
      signed.forEach((outcome, j) => (outcomes[ofChain[j]!.k] = outcome));
    }),
  );
  return outcomes;
}
