// The CLI's actor and audit records (decision 102): whoever runs it has the database, so it acts as an admin under
// its OS user: the numeric uid the kernel reports (who it is), with the account's name for people (decision 180).
// Never $USER: anyone can set it. A command's use case appends the record of its action; a refusal is recorded here.
import { userInfo } from 'node:os';
import { systemClock } from '../clock.js';
import { auditRefusal, type AuditDeps, type AuditEntry } from '../core/operators/audit.js';
import type { Actor } from '../domain/actor.js';
import { AppError } from '../domain/errors.js';

/** `cli:<uid>(<name>)`, or `cli:<uid>` when the uid has no account name; `cli:unknown` where there are no uids. */
export function cliActorId(): string {
  let uid: number | undefined = process.getuid?.();
  let name: string | null = null;
  try {
    const info = userInfo();
    // userInfo().uid is -1 on Windows, where there is no numeric uid.
    if (uid === undefined && info.uid >= 0) uid = info.uid;
    name = info.username;
  } catch {
    // No account for this uid (a container's arbitrary uid): the uid alone.
  }
  if (uid === undefined) return `cli:unknown${name ? `(${name})` : ''}`;
  return `cli:${uid}${name ? `(${name})` : ''}`;
}

export function cliActor(): Actor {
  return { id: cliActorId(), role: 'admin', peer: null };
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
