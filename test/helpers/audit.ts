// The audit entry of an operator action a test runs directly (the use cases take one, decision 102), and the audit
// settings of a test that builds its configuration by hand (decision 186).
import type { AuditConfig, AuditEntry } from '../../src/core/operators/audit.js';
import type { Actor } from '../../src/domain/actor.js';

export const TEST_ACTOR: Actor = { id: 'op_test', role: 'admin', peer: null };

export const TEST_AUDIT_CONFIG: AuditConfig = { audit: { key: 'stableroute-test-audit-key', anchorFile: null } };

export function testAudit(action = 'test', actor: Actor = TEST_ACTOR): AuditEntry {
  return { actor, action, targets: [], details: {} };
}
