// Bounded lanes: the one way the core runs a batch's work a few at a time (confirmation's verdict writes, webhook
// delivery). At most `max` lanes, each a loop that takes its next piece of work from one shared source until the
// source has none left or the lane says it is done; the bound is the caller's, from src/bounds.ts. Lanes open all at
// once, or on demand: one lane first, and each lane lets the next open once it holds work of its own, so that a source
// with little work never opens lanes that would find none (webhooks, decision 77). A lane that fails stops every lane
// taking more work; the others finish what they hold, and then the first failure, in the order the lanes opened, is
// thrown.

export interface Lanes<T> {
  /** Lanes open at most. */
  max: number;
  opening: 'at once' | 'on demand';
  /** The next piece of work for a lane; undefined when there is none left, and the lane ends. */
  take(): T | undefined;
  /** Does one piece of work; false ends this lane. `openLane` opens another lane, if fewer than `max` have opened. */
  run(work: T, openLane: () => void): Promise<boolean>;
}

/** Runs `lanes` until no lane has work left; resolves once nothing is in flight, rejects with the first lane's failure. */
export async function inLanes<T>(lanes: Lanes<T>): Promise<void> {
  let failed = false;
  const opened: Promise<void>[] = [];
  const lane = async (): Promise<void> => {
    for (let work = failed ? undefined : lanes.take(); work !== undefined; work = failed ? undefined : lanes.take()) {
      try {
        if (!(await lanes.run(work, openLane))) return;
      } catch (error) {
        failed = true; // the other lanes finish what they hold and take nothing more
        throw error;
      }
    }
  };
  const openLane = (): void => {
    if (opened.length >= lanes.max || failed) return;
    const started = lane();
    // Awaited below, lane after lane: a lane that fails before its turn must not count as an unhandled rejection
    // meanwhile, which ends the process.
    started.catch(() => undefined);
    opened.push(started);
  };
  if (lanes.opening === 'at once') for (let i = 0; i < lanes.max; i++) openLane();
  else openLane();
  const settled: PromiseSettledResult<void>[] = [];
  for (let i = 0; i < opened.length; i++) settled.push(...(await Promise.allSettled([opened[i]!])));
  const rejected = settled.find((l): l is PromiseRejectedResult => l.status === 'rejected');
  if (rejected !== undefined) throw rejected.reason;
}
