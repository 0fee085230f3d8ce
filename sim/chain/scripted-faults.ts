// A fault plan a test arms by hand: the next `times` rolls of a kind say yes, every other roll says no. For the chain
// world's own tests and for a simulator step that must inject one fault exactly where it is needed.
import type { FaultKind, FaultPlan } from '../faults/plan.js';

export interface ScriptedFaults extends FaultPlan {
  arm(kind: FaultKind, times?: number): void;
  /** Rolls still armed for `kind`. */
  armed(kind: FaultKind): number;
}

export function scriptedFaults(): ScriptedFaults {
  const counts = new Map<FaultKind, number>();
  const armed = new Map<FaultKind, number>();
  let calm = false;
  const count = (kind: FaultKind) => void counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return {
    roll(kind) {
      const left = armed.get(kind) ?? 0;
      if (calm || left === 0) return false;
      armed.set(kind, left - 1);
      count(kind);
      return true;
    },
    beginOp: () => undefined,
    count,
    counts,
    get calm() {
      return calm;
    },
    calmDown() {
      calm = true;
    },
    arm(kind, times = 1) {
      armed.set(kind, (armed.get(kind) ?? 0) + times);
    },
    armed: (kind) => armed.get(kind) ?? 0,
  };
}
