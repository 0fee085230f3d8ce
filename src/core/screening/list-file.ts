// The local denylist (SCREENING_LIST_FILE), kept in memory and reloaded when the file changes, in every process that
// holds one: a watch on the file's directory (it also sees a file replaced by rename, the way deploy tools and editors
// write), and a stat every SCREENING_LIST_CHECK_MS in case the watch misses a change (network file systems, a watch
// the platform refuses). Lookups read the map in memory and never touch the disk. A file that goes missing, cannot be
// read or grows past its bound after a good load keeps the last good list, and says so in the log once per problem.
import { watch, type FSWatcher } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Logger } from 'pino';
import { SCREENING_LIST_CHECK_MS, SCREENING_LIST_FILE_BYTES_MAX } from '../../bounds.js';
import { ConfigError } from '../../config.js';
import { parseDenylist, type Denylist } from '../../domain/screening.js';

export class DenylistFile {
  private list: Denylist = new Map();
  /** The identity of the file as last read (inode, size, mtime): the periodic check reads it again only when it moved. */
  private stamp = '';
  private reading: Promise<void> | null = null;
  private readAgain = false;
  private problem: string | null = null;
  private watcher: FSWatcher | null = null;
  private readonly timer: NodeJS.Timeout;

  private constructor(
    readonly path: string,
    private readonly log: Logger,
  ) {
    this.timer = setInterval(() => void this.refresh({ force: false }), SCREENING_LIST_CHECK_MS);
    this.timer.unref();
  }

  /** Reads the file once; a file that cannot be read at start-up refuses the start, naming the variable. */
  static async open(path: string, log: Logger): Promise<DenylistFile> {
    const file = new DenylistFile(path, log);
    try {
      await file.load();
    } catch (error) {
      file.stop();
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new ConfigError('SCREENING_LIST_FILE', `cannot read the screening list ${path} (${code})`);
    }
    file.watchDirectory();
    return file;
  }

  get current(): Denylist {
    return this.list;
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
          await this.load({ force }).catch((error: unknown) => this.keepLast(error));
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
    const info = await stat(this.path);
    const stamp = `${info.ino}:${info.size}:${info.mtimeMs}`;
    if (!options.force && stamp === this.stamp) return;
    if (info.size > SCREENING_LIST_FILE_BYTES_MAX) throw new Error(`larger than ${SCREENING_LIST_FILE_BYTES_MAX} bytes`);
    const list = parseDenylist(await readFile(this.path, 'utf8'));
    const changed = stamp !== this.stamp || list.size !== this.list.size;
    this.list = list;
    this.stamp = stamp;
    if (this.problem !== null) this.log.info({ path: this.path }, 'screening list readable again');
    this.problem = null;
    if (changed) this.log.info({ path: this.path, addresses: list.size }, 'screening list loaded');
  }

  private keepLast(error: unknown): void {
    const problem = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    if (problem === this.problem) return;
    this.problem = problem;
    this.log.error({ path: this.path, problem, addresses: this.list.size }, 'screening list unreadable; the last good list stays in force');
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
