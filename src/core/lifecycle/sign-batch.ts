// The signatures of one chain, in batches. Every signature of a chain takes its nonce (the simulated chain's
// sequence, Ethereum's chain_nonces row) under a lock held to the commit, so one signature per transaction meant one
// commit per signature, all in a queue. The executions of a process that reach their signature while a batch is being
// written share the next one (group commit, src/db/group-commit.ts): each payment re-checked under its lock, every
// debit posted, then the signatures, last, so the nonce stays locked only for them and the one commit (decision 137).
// A batch that throws is rolled back whole (nothing was sent: bytes leave only after their attempt commits) and its
// requests are signed again one by one, so a failure stays its own payment's.
import type { PreparedTransfer } from '../../chains/port.js';
import { GroupCommit, perPool, type ItemOutcome } from '../../db/group-commit.js';
import { withTransaction } from '../../db/pool.js';
import { insertAttempt, insertAttempts, type NewAttempt } from '../../db/queries/attempts.js';
import type { PaymentIntentRow } from '../../db/queries/intents.js';
import type { Chain, SignedTransfer } from '../../domain/chain.js';
import { movements } from '../../ledger/movements.js';
import { intentsWithDebit, postMany } from '../../ledger/store.js';
import { CHANGED, type LifecycleDeps } from './deps.js';
import { lockLiveToSign } from './live.js';
import { newAttempt, signNewAttempt } from './sign.js';

/** Most signatures in one transaction: bounds how long the chain's nonce stays locked. */
const MAX_SIGN_BATCH = 32;

export interface SignRequest {
  /** The run that holds the payment's execution lease. */
  runId: string;
  intentId: string;
  prepared: PreparedTransfer;
}

export type SignOutcome = { intent: PaymentIntentRow; attemptId: string; signed: SignedTransfer } | typeof CHANGED;

// One per pool and chain: the context that first creates a chain's signer lends it its clock, adapters and logger,
// which are the same for every context of a process.
const signersOf = perPool<Map<Chain, GroupCommit<SignRequest, SignOutcome>>>(() => new Map());

export function signerOf(deps: LifecycleDeps, chain: Chain): GroupCommit<SignRequest, SignOutcome> {
  const signers = signersOf(deps.pool);
  let signer = signers.get(chain);
  if (!signer) {
    signer = new GroupCommit<SignRequest, SignOutcome>((requests) => signBatch(deps, chain, requests), MAX_SIGN_BATCH, (error, items) =>
      deps.log.warn({ err: error, size: items.length, chain }, 'signature batch failed; signing its payments one by one'),
    );
    signers.set(chain, signer);
  }
  return signer;
}

async function signBatch(deps: LifecycleDeps, chain: Chain, requests: readonly SignRequest[]): Promise<ItemOutcome<SignOutcome>[]> {
  const adapter = deps.adapters[chain];
  return withTransaction(deps.pool, async (tx) => {
    const now = deps.clock.now();
    // 1. Each payment under its lock, in id order (two batches lock shared rows in the same order), as its run left it.
    const locked = await lockLiveToSign(tx, requests);
    // 2. One debit per intent, at its first signed transfer (later attempts move the same funds), all in one posting.
    const signing = locked.filter((intent): intent is PaymentIntentRow => intent !== CHANGED);
    const debited = await intentsWithDebit(tx, signing.map((intent) => intent.id));
    await postMany(
      tx,
      signing
        .filter((intent) => !debited.has(intent.id))
        .map((intent) => ({ movement: movements.debit(intent.selected_chain, intent.amount_micros), context: { paymentIntentId: intent.id, at: now } })),
    );
    // 3. The signatures last: the chain's nonce stays locked from the first of them to the commit. The adapter signs
    // them all at once when it can. On a chain with nonces each attempt is stored before the next signature (the next
    // allocation reads them); the others are written together in one INSERT.
    const ready = locked.flatMap((intent, i) => (intent === CHANGED ? [] : [{ i, intent, prepared: requests[i]!.prepared }]));
    const unnumbered = (r: (typeof ready)[number]) => r.prepared.pendingNonce === undefined;
    const signedAll = adapter.signAll && ready.every(unnumbered) ? await adapter.signAll(tx, ready.map((r) => r.prepared)) : null;
    const attempts: NewAttempt[] = new Array(requests.length);
    for (const [k, { i, intent, prepared }] of ready.entries()) {
      attempts[i] = signedAll ? newAttempt(intent, prepared, signedAll[k]!, now) : await signNewAttempt(tx, adapter, intent, prepared, now);
      if (!unnumbered(ready[k]!)) await insertAttempt(tx, attempts[i]);
    }
    await insertAttempts(tx, ready.filter(unnumbered).map((r) => attempts[r.i]!));
    const outcomes = locked.map((intent, i): ItemOutcome<SignOutcome> => {
      const attempt = attempts[i];
      return { ok: true, value: intent === CHANGED || !attempt ? CHANGED : { intent, attemptId: attempt.id, signed: attempt.signed } };
    });
    return outcomes;
  });
}
