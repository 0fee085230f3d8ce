// The operator's actions on a payment, from the console's POSTs: the same use cases the CLI runs, so the same chain
// checks apply (ask the chain, then lock, re-check, persist). A chain that refuses or cannot be asked while a
// replacement or a cancel on chain is prepared is the operator's to retry: a 502 that changed nothing, not a 500.
import { ChainError } from '../../../chains/port.js';
import { AppError } from '../../../domain/errors.js';
import type { Resolution } from '../../../domain/operator-actions.js';
import type { AuditEntry } from '../audit.js';
import { cancelPayment } from '../transitions/cancel.js';
import type { LifecycleDeps } from '../../context.js';
import { resolveManualReview, type ResolutionResult, type ResolveDeps } from '../transitions/resolve.js';

async function chainErrorsAsAppErrors<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof ChainError) throw new AppError('CHAIN_ERROR', `the chain refused or could not be asked: ${error.shortMessage}`, { cause: error });
    throw error;
  }
}

export function resolvePayment(deps: ResolveDeps, id: string, resolution: Resolution, force: boolean, audit: AuditEntry): Promise<ResolutionResult> {
  return chainErrorsAsAppErrors(() => resolveManualReview(deps, id, resolution, { force, audit }));
}

export function cancelPaymentByOperator(deps: LifecycleDeps, id: string, audit: AuditEntry): Promise<ResolutionResult> {
  return chainErrorsAsAppErrors(() => cancelPayment(deps, id, audit));
}
