// The local denylist (SCREENING_LIST_FILE), kept in memory and reloaded when the file changes, in every process that
// holds one: a watch on the file's directory (it also sees a file replaced by rename, the way deploy tools and editors
// write), and a stat every SCREENING_LIST_CHECK_MS in case the watch misses a change (network file systems, a watch
// the platform refuses). Lookups read the map in memory and never touch the disk. A reload never weakens screening:
// a file that goes missing, cannot be read, grows past its bound, lists nothing or drops more than
// SCREENING_LIST_MAX_DROP_PERCENT of the addresses in force (a truncated or half-written file) is refused, the last
// good list stays in force, the log says so once per problem, and the listeners hear the verdict (the operator alert
// `screening_list_rejected`, list-alerts.ts). At start-up there is nothing to compare with: only an unreadable or
// empty file refuses the start (decision 182).
import { watch, type FSWatcher } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Logger } from 'pino';
import { SCREENING_LIST_CHECK_MS, SCREENING_LIST_FILE_BYTES_MAX } from '../../bounds.js';
import { ConfigError } from '../../config.js';
import { listReloadRefusal, parseDenylist, type Denylist } from '../../domain/screening.js';

/** What a reload of the file came to: `stamp` names the file's version (inode, size, mtime). */
export type ListVerdict =
  | { accepted: true; stamp: string; addresses: number }
  | { accepted: false; stamp: string; problem: string; inForce: number };

/** A file that was read but must not replace the list (empty, or too many addresses dropped). */
class ListRefused extends Error {}

export class DenylistFile {
  private list: Denylist = new Map();
  /** The identity of the file as last read (inode, size, mtime): the periodic check reads it again only when it moved. */
  private stamp = '';
  private reading: Promise<void> | null = null;
  private readAgain = false;
  private problem: string | null = null;
  /** The version of the file last refused: the periodic check does not read it again until it moves. */
  private refusedStamp = '';
  private readonly listeners: ((verdict: ListVerdict) => void)[] = [];
  private watcher: FSWatcher | null = null;
  private readonly timer: NodeJS.Timeout;

  private constructor(
    readonly path: string,
    private readonly maxDropPercent: number,
    private readonly log: Logger,
  ) {
    this.timer = setInterval(() => void this.refresh({ force: false }), SCREENING_LIST_CHECK_MS);
    this.timer.unref();
  }

  /** Reads the file once; a file that cannot be read, or lists nothing, at start-up refuses the start, naming the variable. */
  static async open(path: string, maxDropPercent: number, log: Logger): Promise<DenylistFile> {
    const file = new DenylistFile(path, maxDropPercent, log);
    try {
      await file.load();
    } catch (error) {
      file.stop();
      if (error instanceof ListRefused) throw new ConfigError('SCREENING_LIST_FILE', `refusing the screening list ${path}: ${error.message}`);
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new ConfigError('SCREENING_LIST_FILE', `cannot read the screening list ${path} (${code})`);
    }
    file.watchDirectory();
    return file;
  }

  get current(): Denylist {
    return this.list;
  }

  /** Hears the verdict of every reload that read a new version of the file, or failed to (not the start-up read). */
  onVerdict(listener: (verdict: ListVerdict) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Reads the file again (`force`), or only when its inode, size or mtime moved. Concurrent calls share one read, and
   * a call made during a read gets another one after it, so the last change is never missed.
   */
  refresh(options: { force: boolean } = { force: true }): Promise<void> {
    if (this.reading) {
      this.readAgain ||= options.force;
      return this.reading;
    }
    this.reading = (async () => {
      try {
        do {
          const force = options.force || this.readAgain;
          this.readAgain = false;
          await this.load({ force });
        } while (this.readAgain);
      } finally {
        this.reading = null;
      }
    })();
    return this.reading;
  }

  async close(): Promise<void> {
    this.stop();
    await this.reading;
  }

  private stop(): void {
    clearInterval(this.timer);
    this.watcher?.close();
    this.watcher = null;
  }

  private async load(options: { force: boolean } = { force: true }): Promise<void> {
    const initial = this.stamp === '';
    let stamp = '';
    try {
      const info = await stat(this.path);
      stamp = `${info.ino}:${info.size}:${info.mtimeMs}`;
      if (!options.force && (stamp === this.stamp || stamp === this.refusedStamp)) return;
      if (info.size > SCREENING_LIST_FILE_BYTES_MAX) throw new Error(`larger than ${SCREENING_LIST_FILE_BYTES_MAX} bytes`);
      const list = parseDenylist(await readFile(this.path, 'utf8'));
      const refusal = listReloadRefusal(initial ? null : this.list, list, this.maxDropPercent);
      if (refusal !== null) throw new ListRefused(refusal);
      const changed = stamp !== this.stamp || list.size !== this.list.size;
      this.list = list;
      this.stamp = stamp;
      this.refusedStamp = '';
      if (this.problem !== null) this.log.info({ path: this.path }, 'screening list readable again');
      this.problem = null;
      if (changed) this.log.info({ path: this.path, addresses: list.size }, 'screening list loaded');
      if (!initial) this.tell({ accepted: true, stamp, addresses: list.size });
    } catch (error) {
      if (initial) throw error;
      this.refusedStamp = stamp;
      this.keepLast(error, stamp);
    }
  }

  private keepLast(error: unknown, stamp: string): void {
    const problem = error instanceof ListRefused ? error.message : ((error as NodeJS.ErrnoException).code ?? (error as Error).message);
    this.tell({ accepted: false, stamp, problem, inForce: this.list.size });
    if (problem === this.problem) return;
    this.problem = problem;
    this.log.error({ path: this.path, problem, addresses: this.list.size }, 'screening list refused; the last good list stays in force');
  }

  private tell(verdict: ListVerdict): void {
    for (const listener of this.listeners) listener(verdict);
  }

  private watchDirectory(): void {
    const name = basename(this.path);
    try {
      this.watcher = watch(dirname(this.path), { persistent: false }, (_event, changed) => {
        if (changed === null || changed.toString() === name) void this.refresh({ force: true });
      });
      this.watcher.on('error', (error) => {
        this.log.warn({ err: error, path: this.path }, 'screening list watch failed; the periodic check remains');
        this.watcher?.close();
        this.watcher = null;
      });
    } catch (error) {
      this.log.warn({ err: error, path: this.path }, 'screening list cannot be watched; the periodic check remains');
    }
  }
}
