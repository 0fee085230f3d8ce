// The CLI's actor and audit records (decision 102): whoever runs it has the database, so it acts as an admin under
// its OS user's name. A command's use case appends the record of its action; a refusal is recorded here.
import { userInfo } from 'node:os';
import { systemClock } from '../clock.js';
import { auditRefusal, type AuditDeps, type AuditEntry } from '../core/audit.js';
import type { Actor } from '../domain/actor.js';
import { AppError } from '../domain/errors.js';

export function cliActor(): Actor {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    user = process.env.USER ?? 'unknown';
  }
  return { id: `cli:${user}`, role: 'admin', peer: null };
}

export function cliAudit(action: string, targets: string[], details: Record<string, unknown> = {}): AuditEntry {
  return { actor: cliActor(), action, targets, details };
}

/** Runs a state-changing command; a refusal (an AppError) is recorded under the CLI's actor, then passed on. */
export async function recordingRefusals<T>(deps: AuditDeps, entry: AuditEntry, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof AppError) await auditRefusal(deps, entry, error.code, systemClock.now());
    throw error;
  }
}
