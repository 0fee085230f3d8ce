// The answer of a locked re-check whose facts changed since the chain was asked (another worker or an operator moved the
// payment in between): the use case starts over, at most RECHECK_ROUNDS_MAX times in all (src/bounds.ts).
export const CHANGED = Symbol('changed');
