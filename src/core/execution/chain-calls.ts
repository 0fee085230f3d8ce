// Every call an execution batch makes to the chains, none under a lock: what the chain says of a transfer an earlier
// run left, the preparation of a new transfer (chain reads), and the send. Each is one call per payment, with the
// adapter's own timeout (RPC_TIMEOUT_SECONDS), all of a batch at once; a call that fails is its payment's alone.
import { adapterOf, ChainError, type PreparedTransfer } from '../../chains/port.js';
import type { ItemOutcome } from '../../db/group-commit.js';
import { signedOf, type AttemptRow } from '../../db/queries/attempts.js';
import type { PaymentIntentRow } from '../../db/queries/intents.js';
import type { SignedTransfer } from '../../domain/chain.js';
import { transferVerdict, type TransferVerdict } from '../../domain/transfer-verdict.js';
import { transferRequestOf } from '../lifecycle/sign-attempts.js';
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
    transferVerdict((await adapterOf(deps.adapters, intent.selected_chain).getStatuses([signedOf(live)]))[0]!, { chain: intent.selected_chain }),
  );
}

/**
 * A new transfer of each intent, prepared (chain reads: fees, the nonce to use); a chain that refuses to even build it
 * answers its ChainError. After a refusal the nonce allocation hands the intent its own refused nonce back while no
 * other transfer took it, so no later transfer waits behind a gap; after a nonce conflict it is someone else's, and a
 * fresh one is taken.
 */
export function prepareTransfers(deps: ExecutionDeps, intents: readonly PaymentIntentRow[]): Promise<ItemOutcome<PreparedTransfer | ChainError>[]> {
  return each(intents, async (intent) => {
    try {
      return await adapterOf(deps.adapters, intent.selected_chain).prepareTransfer(transferRequestOf(intent));
    } catch (error) {
      if (!(error instanceof ChainError)) throw error;
      return error;
    }
  });
}

export interface Send {
  intent: PaymentIntentRow;
  transfer: SignedTransfer;
  /** The bytes were sent before with an unknown outcome: a refusal now does not prove they cannot land. */
  resend: boolean;
}

/** Sends each transfer's bytes; the answer is its send error, null when the node took them. Never throws. */
export async function sendTransfers(deps: ExecutionDeps, sends: readonly Send[]): Promise<(ChainError | null)[]> {
  return Promise.all(
    sends.map(async ({ intent, transfer, resend }) => {
      let error: ChainError | null = null;
      try {
        await adapterOf(deps.adapters, intent.selected_chain).broadcast(transfer);
      } catch (caught) {
        error =
          caught instanceof ChainError
            ? caught
            : new ChainError('rpc_error', 'unknown', 'broadcast failed unexpectedly', { cause: caught, details: String(caught) });
      }
      // A node refusing bytes it may already have passed on (or that other nodes hold) proves nothing: only the chain's
      // own answer to getStatuses, on the next run, may end that attempt.
      if (error && resend && error.outcome === 'rejected') {
        error = new ChainError(error.reason, 'unknown', error.shortMessage, { cause: error, details: error.details });
      }
      return error;
    }),
  );
}
