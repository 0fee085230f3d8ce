// A short, fixed set of seeds run under the simulator with its faults (docs/simulator.md): each must keep every
// invariant, through its drain to the end checks. A seed that breaks is a bug to fix, never one to drop from here.
import { describe, expect, it } from 'vitest';
import { formatReport } from '../../sim/report.js';
import { DEFAULT_RATES, runSimulation } from '../../sim/run.js';
import { adminDatabaseUrl } from '../helpers/db.js';

/** Heavier faults than a long run's, so that a short run meets each kind. */
const RATES = {
  ...DEFAULT_RATES,
  'process.worker_dies': 0.15,
  'process.worker_stalls': 0.2,
  'process.workers_race': 0.2,
  'outside.webhook_fails': 0.25,
  'outside.clock_jump': 0.1,
};

describe('the simulator, on its fixed seeds', () => {
  for (const seed of ['1', '2', '3']) {
    it(`seed ${seed} keeps every invariant`, { timeout: 120_000 }, async () => {
      const report = await runSimulation({ seed, ops: 120, databaseUrl: adminDatabaseUrl(), rates: RATES, fullEvery: 40 });
      expect(report.ok, formatReport(report)).toBe(true);
      expect(report.checks).toBeGreaterThan(120);
      expect(Object.keys(report.faults).length).toBeGreaterThan(0);
    });
  }

  it('replays a seed: the same operations, outcomes and faults', { timeout: 120_000 }, async () => {
    const run = () => runSimulation({ seed: '4', ops: 120, databaseUrl: adminDatabaseUrl(), rates: RATES, fullEvery: 40 });
    const first = await run();
    const second = await run();
    expect(first.ok && second.ok, formatReport(first.ok ? second : first)).toBe(true);
    expect(second.faults).toEqual(first.faults);
    expect(second.digest).toBe(first.digest);
  });
});
