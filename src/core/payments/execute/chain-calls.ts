// Every call an execution batch makes to the chains, none under a lock: what the chain says of a transfer an earlier
// run left, the preparation of a new transfer (chain reads), and the send. Each is one call per payment, with the
// adapter's own timeout (RPC_TIMEOUT_SECONDS), all of a batch at once; a call that fails is its payment's alone. The
// preparations are the exception: one call per chain for the batch, so that a chain can pay several in one transaction.
import { adapterOf, ChainError, type PreparedTransfer } from '../../../chains/port.js';
import type { ItemOutcome } from '../../../db/group-commit.js';
import type { AttemptRow } from '../../../db/queries/attempts.js';
import type { PaymentIntentRow } from '../../../db/queries/intents.js';
import { signedOf, type SignedTransfer } from '../../../domain/chain.js';
import { shareOf } from '../../../domain/fee-share.js';
import { transferVerdict, type TransferVerdict } from '../../../domain/transfer-verdict.js';
import { transferRequestOf } from '../outcomes/sign-attempts.js';
import type { ExecutionDeps } from './run.js';

async function each<T, R>(items: readonly T[], call: (item: T) => Promise<R>): Promise<ItemOutcome<R>[]> {
  const settled = await Promise.allSettled(items.map(call));
  return settled.map((s) => (s.status === 'fulfilled' ? { ok: true, value: s.value } : { ok: false, error: s.reason }));
}

/** The chain's verdict on each earlier run's transfer; a node that cannot be asked fails that run (its job is retried). */
export function askAboutLiveTransfers(
  deps: ExecutionDeps,
  items: readonly { intent: PaymentIntentRow; live: AttemptRow }[],
): Promise<ItemOutcome<TransferVerdict>[]> {
  return each(items, async ({ intent, live }) =>
    transferVerdict((await adapterOf(deps.adapters, intent.selected_chain).getStatuses([signedOf(live)]))[0]!, { chain: intent.selected_chain, share: shareOf(live) }),
  );
}

/**
 * The new transfers of the intents, prepared by their chains (chain reads: fees, the nonce to use), one call per chain
 * for all of its intents, and one for each intent that goes `alone`. The answer is per intent: the transaction that
 * pays it (one object shared by the intents an on-chain batch pays), or the ChainError of an intent its chain refuses
 * to even build. A call for several intents that throws is made again for each alone, at once, so a failure stays its
 * own intent's: a ChainError then answers it, and anything else (a bug, a node out of reach) fails its run, which is
 * retried. After a refusal the nonce allocation hands the intent its own refused nonce back while no other transfer
 * took it, so no later transfer waits behind a gap; after a nonce conflict it is someone else's, and a fresh one is
 * taken.
 */
export async function prepareTransfers(
  deps: ExecutionDeps,
  items: readonly { intent: PaymentIntentRow; alone: boolean }[],
): Promise<ItemOutcome<PreparedTransfer | ChainError>[]> {
  const intents = items.map((item) => item.intent);
  const outcomes: ItemOutcome<PreparedTransfer | ChainError>[] = new Array(intents.length);
  const prepare = async (ks: readonly number[]): Promise<void> => {
    try {
      const answers = await adapterOf(deps.adapters, intents[ks[0]!]!.selected_chain).prepareTransfers(ks.map((k) => transferRequestOf(intents[k]!)));
      ks.forEach((k, j) => (outcomes[k] = { ok: true, value: answers[j]! }));
    } catch (error) {
      if (ks.length > 1) await Promise.all(ks.map((k) => prepare([k])));
      else outcomes[ks[0]!] = error instanceof ChainError ? { ok: true, value: error } : { ok: false, error };
    }
  };
  // One call per chain, and one of its own for each payment that goes alone (an on-chain batch that paid it failed).
  const calls = new Map<string, number[]>();
  items.forEach(({ intent, alone }, k) => {
    const key = alone ? `alone:${k}` : intent.selected_chain;
    const call = calls.get(key);
    if (call) call.push(k);
    else calls.set(key, [k]);
  });
  await Promise.all([...calls.values()].map((ks) => prepare(ks)));
  return outcomes;
}

export interface Send {
  intent: PaymentIntentRow;
  transfer: SignedTransfer;
  /** The bytes were sent before with an unknown outcome: a refusal now does not prove they cannot land. */
  resend: boolean;
}

/**
 * Sends each transfer's bytes, once per transaction (the payments of an on-chain batch share theirs); the answer is
 * each send's error, null when the node took them. Never throws.
 */
export async function sendTransfers(deps: ExecutionDeps, sends: readonly Send[]): Promise<(ChainError | null)[]> {
  const once = new Map<string, Promise<ChainError | null>>();
  return Promise.all(
    sends.map(async ({ intent, transfer, resend }) => {
      const key = `${intent.selected_chain}\u0000${transfer.txId}`;
      let sent = once.get(key);
      if (!sent) once.set(key, (sent = broadcastOnce(deps, intent, transfer)));
      const error = await sent;
      // A node refusing bytes it may already have passed on (or that other nodes hold) proves nothing: only the chain's
      // own answer to getStatuses, on the next run, may end that attempt.
      if (error && resend && error.outcome === 'rejected') {
        return new ChainError(error.reason, 'unknown', error.shortMessage, { cause: error, details: error.details });
      }
      return error;
    }),
  );
}

async function broadcastOnce(deps: ExecutionDeps, intent: PaymentIntentRow, transfer: SignedTransfer): Promise<ChainError | null> {
  try {
    await adapterOf(deps.adapters, intent.selected_chain).broadcast(transfer);
    return null;
  } catch (caught) {
    return caught instanceof ChainError
      ? caught
      : new ChainError('rpc_error', 'unknown', 'broadcast failed unexpectedly', { cause: caught, details: String(caught) });
  }
}
