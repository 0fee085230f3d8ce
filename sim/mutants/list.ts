// The planted bugs `npm run simulate:mutants` shows the simulator catching (issue 37, item 4). Each is a bug an earlier
// review found (docs/decisions.md, git log) or one a refactor could bring back: a few characters of src/ changed, one
// edit or a few that belong together. Every `find` must occur exactly once in its file on the current code
// (test/sim/mutants.test.ts, and the runner refuses otherwise), so a refactor that moves the code shows up here instead
// of a mutant silently planting nothing. A mutant the simulator misses is a gap to close, not a line to delete.

export interface Edit {
  /** Path from the repository's root, under src/. */
  file: string;
  /** Exact text, present once in the file. */
  find: string;
  replace: string;
}

export interface Mutant {
  id: string;
  /** The bug, in words. */
  bug: string;
  edits: readonly Edit[];
  /** The invariant (issue 37 §3) expected to catch it, in words: the simulator's name for it may differ. */
  invariant: string;
}

export const MUTANTS: readonly Mutant[] = [
  {
    id: 'sign-without-recheck',
    bug: 'the signature transaction skips the re-check under lock: a payment another run took over, or an operator moved, is signed (and debited) anyway',
    edits: [
      {
        file: 'src/core/payments/execute/sign.ts',
        find: 'if (!ofGroup.every(({ intent, facts }) => intent !== null && isAsLeft(facts, null))) return [];',
        replace: 'if (!ofGroup.every(({ intent }) => intent !== null)) return [];',
      },
    ],
    invariant: 'at most one landed transfer per payment / one signed transaction per (chain, treasury, nonce) / statuses only move forward',
  },
  {
    id: 'unknown-send-frees-nonce',
    bug: 'a send with an unknown outcome (timeout after the node took it) is recorded as refused: the attempt fails, its nonce is handed out again and the payment is signed anew while the first bytes can still land',
    edits: [
      {
        file: 'src/domain/execution.ts',
        find: "const write = send.attemptId === null ? 'sign_refusal' : error.outcome === 'rejected' ? 'attempt_failed' : 'send_error';",
        replace: "const write = send.attemptId === null ? 'sign_refusal' : 'attempt_failed';",
      },
    ],
    invariant: 'at most one landed transfer per payment; no two signed transactions per (chain, treasury, nonce) except a replacement',
  },
  {
    id: 'nonce-held-only-once-broadcast',
    bug: 'the nonce allocation counts only broadcast attempts as holding their nonce: a signed transfer whose send is still unknown gives its nonce to the next payment',
    edits: [
      {
        file: 'src/db/queries/nonces.ts',
        find: "bool_or(a.status IN ('signed', 'broadcasted')",
        replace: "bool_or(a.status IN ('broadcasted')",
      },
    ],
    invariant: 'no two different signed transactions for one (chain, treasury, nonce) except a replacement of the same payments',
  },
  {
    id: 'batch-fee-booked-whole',
    bug: "a final on-chain batch books the whole transaction's fee on each of its payments instead of each payment's share",
    edits: [
      {
        file: 'src/domain/transfer-verdict.ts',
        find: "return { kind: 'final', feeNative: feeShare(status.feeNative, share),",
        replace: "return { kind: 'final', feeNative: status.feeNative,",
      },
    ],
    invariant: 'reconcile shows no difference (native fees booked = fees the chain charged)',
  },
  {
    id: 'batch-fee-share-wrong-index',
    bug: "each payment of an on-chain batch is stored as the batch's first payment: the leftover fee units are booked once per payment, not once",
    edits: [
      {
        file: 'src/core/payments/outcomes/sign-attempts.ts',
        find: 'tx_payment_index: index,',
        replace: 'tx_payment_index: 0,',
      },
    ],
    invariant: 'reconcile shows no difference (native fees booked = fees the chain charged)',
  },
  {
    id: 'unknown-verdict-releases',
    bug: "a transfer the node does not know (unknown verdict) is taken as unable to land: an operator's cancel or an abandoned execution releases its funds while the bytes can still land",
    edits: [
      {
        file: 'src/domain/transfer-verdict.ts',
        find: "return verdict.kind !== 'cannot_land';",
        replace: "return verdict.kind !== 'cannot_land' && verdict.kind !== 'unknown';",
      },
    ],
    invariant: 'at most one landed transfer per payment, none for a failed or cancelled one; reserved + in-flight = open payments',
  },
  {
    id: 'stale-lease-records-outcome',
    bug: 'a run whose lease was taken over (presumed dead) still records how its send came out: it moves or fails a payment another run now owns',
    edits: [
      {
        file: 'src/domain/execution.ts',
        find: "if (facts.status !== 'broadcasting' || !facts.holdsLease) return { kind: 'none' };",
        replace: "if (facts.status !== 'broadcasting') return { kind: 'none' };",
      },
    ],
    invariant: 'at most one landed transfer per payment; funds never released for a transfer that may land',
  },
  {
    id: 'stale-lease-passes-recheck',
    bug: 'the locked re-check forgets the lease: a run presumed dead writes its chain verdicts and signs over the run that took its payment over',
    edits: [
      {
        file: 'src/domain/execution.ts',
        find: "if (facts.status !== 'broadcasting' || !facts.holdsLease) return false;",
        replace: "if (facts.status !== 'broadcasting') return false;",
      },
    ],
    invariant: 'one signed transaction per (chain, treasury, nonce); at most one landed transfer per payment',
  },
  {
    id: 'reserve-skips-available',
    bug: "a reservation no longer checks the chain's available balance: payments are accepted beyond the treasury's funds",
    edits: [
      {
        file: 'src/domain/reservation.ts',
        find: 'if (available < quote.amountMicros) {',
        replace: 'if (available < 0n) {',
      },
    ],
    invariant: 'available is never negative',
  },
  {
    id: 'refund-twice',
    bug: 'a second return to a settled payout is booked as its refund again (payouts -> available twice)',
    edits: [
      {
        file: 'src/core/treasury/deposits/book.ts',
        find: "if (!intent || intent.status !== 'settled' || (await readInboundOfIntent(tx, intent.id)) !== null) {",
        replace: "if (!intent || intent.status !== 'settled') {",
      },
    ],
    invariant: 'no payment refunded twice (its refunds at most its amount); each balance equals its postings',
  },
  {
    id: 'double-debit',
    bug: 'every signed attempt posts the debit, not only the first: a re-signed payment is debited twice',
    edits: [
      {
        file: 'src/core/payments/execute/sign.ts',
        find: '.filter((r) => !debited.has(r.intent.id))',
        replace: ".filter((r) => r.intent.id !== '')",
      },
    ],
    invariant: 'no payment is debited twice; reserved + in-flight = open payments',
  },
  {
    id: 'status-backward',
    bug: 'a claim takes a payment that is already broadcasted (a job run again) back to broadcasting, and the status check that would refuse it is gone',
    edits: [
      {
        file: 'src/domain/execution.ts',
        find: "if (status !== 'route_selected' && status !== 'retrying' && status !== 'broadcasting') return",
        replace: "if (status !== 'route_selected' && status !== 'retrying' && status !== 'broadcasting' && status !== 'broadcasted') return",
      },
      {
        file: 'src/db/queries/transitions.ts',
        find: 'for (const change of changes) transition(change.intent.status, change.to);',
        replace: 'for (const change of changes) void transition;',
      },
    ],
    invariant: 'statuses only move forward',
  },
  {
    id: 'idempotency-replay-ignores-stored',
    bug: "a replayed idempotency key is decided as a new request when its intent is stored (only keys of the same batch are remembered): the replay gets an error or an expired quote, not the same payment",
    edits: [
      {
        file: 'src/domain/reservation.ts',
        find: 'const usedWith = stored?.quoteId ?? earlier?.quoteId;',
        replace: 'const usedWith = earlier?.quoteId;',
      },
    ],
    invariant: 'a replayed idempotency key returns the same payment',
  },
  {
    id: 'resign-while-unknown',
    bug: 'an earlier run\u2019s transfer the node does not know is taken as expired: a new transfer is signed while the old signature (a Solana blockhash still valid) can still land',
    edits: [
      {
        file: 'src/domain/execution.ts',
        find: "if (verdict.kind === 'unknown') return { kind: 'resend' };",
        replace: "if (verdict.kind === 'unknown') return { kind: 'superseded', reason: 'blockhash_expired' };",
      },
    ],
    invariant: 'no Solana re-sign while an earlier signature for the payment can still land; at most one landed transfer per payment',
  },
  {
    id: 'failed-without-webhook',
    bug: 'a payment failed with its funds released is not told to its merchant: no payment.failed event is enqueued',
    edits: [
      {
        file: 'src/core/payments/outcomes/outcomes.ts',
        find: "await moveAndTell(tx, [{ intent, to: 'failed', type: 'payment.failed', extra: { failure_reason: reason }, reason }], at);",
        replace: "await moveAndTell(tx, [{ intent, to: 'failed', reason }], at);",
      },
    ],
    invariant: "every status change's webhook is delivered at least once",
  },
  {
    id: 'webhook-5xx-counted-delivered',
    bug: "a receiver's 5xx (or 3xx, 4xx) answer counts as a delivery: the event is never retried and the merchant never hears of the change",
    edits: [
      {
        file: 'src/domain/webhook-delivery.ts',
        find: 'return outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode <= 299;',
        replace: 'return outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode <= 599;',
      },
    ],
    invariant: "every status change's webhook is delivered at least once (as the receiver saw it, not as the outbox says)",
  },
  {
    id: 'settle-on-inclusion',
    bug: 'a transfer included in a block, not final yet, settles its payment: a reorganisation below finality leaves a settled payout the chain never paid',
    edits: [
      {
        file: 'src/domain/confirmation.ts',
        find: "if (verdict.kind === 'included' && intentStatus === 'broadcasted') return { kind: 'pending_confirmation' };",
        replace: "if (verdict.kind === 'included') return { kind: 'settle', feeNative: 0n };",
      },
    ],
    invariant: 'reconcile shows no difference; every settled payment has a final transfer on the chain',
  },
  {
    id: 'approval-per-day-ignores-history',
    bug: "the per-day approval threshold compares the payment alone, not with what left without approval in the last 24 hours: splitting a payout beats it",
    edits: [
      {
        file: 'src/domain/spending-policy.ts',
        find: 'if (perDay !== null && facts.withoutApproval24hMicros + facts.amountMicros > perDay) {',
        replace: 'if (perDay !== null && facts.amountMicros > perDay) {',
      },
    ],
    invariant: 'no payout breaks its policy or approval',
  },
  {
    id: 'approval-threshold-inclusive',
    bug: 'the approval threshold compared with >= instead of >: a payment of exactly the threshold waits for an operator it does not need (decision: approval *above* the threshold)',
    edits: [
      {
        file: 'src/domain/spending-policy.ts',
        find: 'if (policy.approvalAboveMicros !== null && facts.amountMicros > policy.approvalAboveMicros) {',
        replace: 'if (policy.approvalAboveMicros !== null && facts.amountMicros >= policy.approvalAboveMicros) {',
      },
    ],
    invariant: 'no payout breaks its policy or approval (the hold decided exactly: above the threshold, and only then)',
  },
  {
    id: 'screening-timeout-allows',
    bug: 'a screening provider that times out clears the recipient even with SCREENING_FAIL=closed',
    edits: [
      {
        file: 'src/core/screening/provider.ts',
        find: "const decision: Decision = this.settings.fail === 'closed' ? 'deny' : 'allow';",
        replace: "const decision: Decision = this.settings.fail === 'closed' && problem !== 'timeout' ? 'deny' : 'allow';",
      },
    ],
    invariant: 'no payout breaks its screening verdict',
  },
];
