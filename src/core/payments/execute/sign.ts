// The signatures of a batch, one transaction per chain. Every signature of a chain takes its nonce (the simulated
// chain's sequence, Ethereum's chain_nonces row) under a lock held to the commit, so the batch's payments of one chain
// are re-checked under their locks, then signed, and their debits posted last: the nonce stays locked only for the
// signatures, one posting and the commit (decision 137), and the ledger rows the API's reservations share only for
// the posting and the commit. A transaction that throws is rolled back whole (nothing was sent: bytes leave only after
// their attempt commits) and its transactions are signed again one by one, so a failure stays its own transaction's
// (an on-chain batch's payments are signed together or not at all). The transaction's first statement asks whether the
// chain may sign at all (decision 199): while it is held, nothing is signed and each run's job comes back later.
import { BOOKS_HOLD_RECHECK_SECONDS } from '../../../bounds.js';
import type { PreparedTransfer } from '../../../chains/port.js';
import type { ItemOutcome } from '../../../db/group-commit.js';
import type { PaymentIntentRow } from '../../../db/queries/intents.js';
import type { SignedTransfer } from '../../../domain/chain.js';
import { isAsLeft } from '../../../domain/execution.js';
import { enqueueRetry } from '../../../jobs/queue.js';
import { movements } from '../../../ledger/movements.js';
import { intentsWithDebit, postMany } from '../../../ledger/store.js';
import { lockedStep } from '../locked-step.js';
import { CHANGED } from '../outcomes/changed.js';
import { clearToSign, signAttempts, transactionsOf } from '../outcomes/sign-attempts.js';
import { lockForRecheck } from './recheck.js';
import type { ExecutionDeps, ExecutionRun } from './run.js';
import { currencyOf } from '../../../domain/token.js';

export interface ToSign {
  run: ExecutionRun;
  intent: PaymentIntentRow;
  prepared: PreparedTransfer;
}

export type Signed = { intent: PaymentIntentRow; attemptId: string; transfer: SignedTransfer };

/** The chain's signing is held (decision 199): nothing was signed, and the run's job was queued again for later. */
export const HELD = Symbol('held');

/**
 * Signs each run's prepared transfer as a new attempt; CHANGED where the payment is no longer as its run left it. A
 * transaction that pays several payments (an on-chain batch) is signed once, for all of them, and only when every one
 * of them is still as its run left it; otherwise none of them is signed, and each starts over in the next round.
 */
export async function signTransfers(deps: ExecutionDeps, items: readonly ToSign[]): Promise<ItemOutcome<Signed | typeof CHANGED | typeof HELD>[]> {
  const outcomes: ItemOutcome<Signed | typeof CHANGED | typeof HELD>[] = new Array(items.length);
  await Promise.all(
    Object.entries(deps.adapters).map(async ([chain, adapter]) => {
      // The unit of a signature transaction, and of its retry alone after a failure: one chain transaction with the
      // payments it pays, never a part of them.
      const ofChain = items.flatMap((item, k) => (item.intent.selected_chain === chain ? [{ item, k }] : []));
      const groups = [...transactionsOf(ofChain.map((c) => c.item.prepared)).values()].map((places) => places.map((j) => ofChain[j]!));
      const signed = await lockedStep(deps, groups, {
        async lock(tx, batch) {
          // 0. The chain may sign: checked in this transaction, so no signature leaves between a failover and its check.
          const clearance = await clearToSign(tx, chain);
          if (clearance === null) return null;
          // 1. Each payment under its lock, as its run left it: still broadcasting under its lease, nothing signed yet.
          return { clearance, locked: await lockForRecheck(tx, batch.flat().map((m) => m.item.run), { lockAttempts: false }) };
        },
        async write(tx, batch, cleared, now) {
          if (cleared === null) {
            // Held (decision 199): nothing is signed, and each run's job comes back later.
            const runs = batch.flat().map((m) => m.item.run);
            for (const run of runs) await enqueueRetry(deps.boss, tx, run.job, BOOKS_HOLD_RECHECK_SECONDS);
            return batch.map((group) => group.map((): typeof HELD => HELD));
          }
          // A transaction is signed only when every payment it pays is as its run left it.
          const { clearance, locked } = cleared;
          let offset = 0;
          const ready = batch.flatMap((group, g) => {
            const ofGroup = locked.slice(offset, (offset += group.length));
            if (!ofGroup.every(({ intent, facts }) => intent !== null && isAsLeft(facts, null))) return [];
            return group.map(({ item }, i) => ({ g, i, intent: ofGroup[i]!.intent!, prepared: item.prepared }));
          });
          // 2. The signatures: the chain's nonce stays locked from the first of them to the commit.
          const attempts = await signAttempts(tx, adapter, ready, now, clearance);
          // 3. One debit per intent, at its first signed transfer (later attempts move the same funds), in one posting,
          //    last: the ledger's rows are the ones the API's reservations lock too, held from here to the commit only.
          const debited = await intentsWithDebit(tx, ready.map((r) => r.intent.id));
          await postMany(
            tx,
            ready
              .filter((r) => !debited.has(r.intent.id))
              .map((r) => ({ movement: movements.debit(chain, r.intent.amount_micros, currencyOf(r.intent.token)), context: { paymentIntentId: r.intent.id, at: now } })),
          );
          const answers: (Signed | typeof CHANGED | typeof HELD)[][] = batch.map((group) => group.map(() => CHANGED));
          ready.forEach((r, n) => (answers[r.g]![r.i] = { intent: r.intent, attemptId: attempts[n]!.id, transfer: attempts[n]!.signed }));
          return answers;
        },
        onSplit: (error, batch) => deps.log.warn({ err: error, size: batch.length, chain }, 'signature batch failed; signing its transactions one by one'),
      });
      signed.forEach((outcome, g) =>
        groups[g]!.forEach(({ k }, i) => (outcomes[k] = outcome.ok ? { ok: true, value: outcome.value[i]! } : outcome)),
      );
    }),
  );
  return outcomes;
}
