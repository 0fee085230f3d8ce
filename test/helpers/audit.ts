// The audit entry of an operator action a test runs directly (the use cases take one, decision 102).
import type { AuditEntry } from '../../src/core/audit.js';
import type { Actor } from '../../src/domain/actor.js';

export const TEST_ACTOR: Actor = { id: 'op_test', role: 'admin', peer: null };

export function testAudit(action = 'test', actor: Actor = TEST_ACTOR): AuditEntry {
  return { actor, action, targets: [], details: {} };
}
