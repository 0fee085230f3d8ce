// The operator alert `screening_list_rejected` (decision 182): raised when a reload of SCREENING_LIST_FILE is refused
// (the last good list stays in force), resolved by the next reload that is accepted. Every process watches the file
// and reports what it saw, so the writes are idempotent across processes: a raise opens the one open alert of its kind
// or refreshes it (announced once), and a resolve finds it open or does nothing. A process writes each verdict once
// (one per version of the file), in order, and tries again while the database refuses.
import type { Logger } from 'pino';
import { SCREENING_LIST_CHECK_MS } from '../../bounds.js';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { withTransaction, type Pool } from '../../db/pool.js';
import { raiseAlert, resolveAlert } from '../operators/alerts.js';
import type { DenylistFile, ListVerdict } from './list-file.js';

export interface ListAlertDeps {
  pool: Pool;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'operatorWebhookUrl'>;
}

const verdictKey = (v: ListVerdict) => (v.accepted ? `accepted ${v.stamp}` : `refused ${v.stamp} ${v.problem}`);

export class ListAlerts {
  private latest: ListVerdict | null = null;
  private written: string | null = null;
  private writing: Promise<void> = Promise.resolve();
  private retry: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    file: DenylistFile,
    private readonly deps: ListAlertDeps,
  ) {
    file.onVerdict((verdict) => this.report(verdict));
  }

  /** Resolves once every verdict heard so far is written (or its write failed and waits for a retry). */
  settled(): Promise<void> {
    return this.writing;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    await this.writing;
  }

  private report(verdict: ListVerdict): void {
    this.latest = verdict;
    this.writing = this.writing.then(() => this.write());
  }

  /** Writes the latest verdict, unless it is the one written last: a process says each thing once. */
  private async write(): Promise<void> {
    const verdict = this.latest;
    if (verdict === null || this.closed || verdictKey(verdict) === this.written) return;
    try {
      await withTransaction(this.deps.pool, async (tx) => {
        const now = this.deps.clock.now();
        if (verdict.accepted) return resolveAlert(tx, this.deps, 'screening_list_rejected', null, now);
        const message =
          `a reload of the screening list was refused: ${verdict.problem}; the last good list (${verdict.inForce} addresses) stays in force. ` +
          'Write the new list to a file beside it, then rename it over SCREENING_LIST_FILE';
        return raiseAlert(tx, this.deps, { kind: 'screening_list_rejected', chain: null, message }, now);
      });
      this.written = verdictKey(verdict);
    } catch (error) {
      this.deps.log.warn({ err: error }, 'screening list alert not written; trying again');
      this.retry ??= setTimeout(() => {
        this.retry = null;
        if (this.latest) this.report(this.latest);
      }, SCREENING_LIST_CHECK_MS);
      this.retry.unref();
    }
  }
}
