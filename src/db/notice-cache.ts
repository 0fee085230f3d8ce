// Facts that many requests read and few transactions change (treasury balances, chain health, merchant policies),
// cached in the process and dropped when PostgreSQL says they changed: triggers (migration 069) NOTIFY the topic of
// every table a fact is read from, in the changing transaction, so the notice arrives when it commits (decision 136).
// The cache is an accelerator, never the record: while the LISTEN connection is down every read goes to the database,
// a reconnection drops everything (notices sent meanwhile are lost), and an entry older than `maxAgeMs` is read
// again even without a notice (a connection that died silently cannot keep a value for long).
import type { Logger } from 'pino';
import { listen, type Listener } from './listener.js';
import { FACTS_CHANNEL, type FactTopic } from './notify.js';
import type { Pool } from './pool.js';
import { NOTICE_CACHE_ENTRIES_MAX } from '../bounds.js';

interface Entry {
  value: Promise<unknown>;
  at: number;
}

export interface NoticeCacheOptions {
  maxAgeMs?: number;
  log?: Logger;
  /** Milliseconds since an arbitrary origin; the cache's own ages only (tests move it). */
  monotonicMs?: () => number;
}

export class NoticeCache {
  private readonly topics = new Map<FactTopic, Map<string, Entry>>();
  private readonly listener: Listener;
  private readonly maxAgeMs: number;
  private readonly nowMs: () => number;

  constructor(pool: Pool, options: NoticeCacheOptions = {}) {
    this.maxAgeMs = options.maxAgeMs ?? 1_000;
    this.nowMs = options.monotonicMs ?? (() => performance.now());
    this.listener = listen(pool, {
      channel: FACTS_CHANNEL,
      applicationName: 'stableroute-facts',
      onNotice: (topic) => this.topics.get(topic as FactTopic)?.clear(),
      // Notices sent while the connection was away are lost: nothing cached before it can be trusted.
      onListening: () => this.topics.clear(),
      ...(options.log ? { log: options.log } : {}),
    });
  }

  /** Whether cached answers are served now (the LISTEN connection is up). */
  get serving(): boolean {
    return this.listener.listening;
  }

  /**
   * The fact under (topic, key): the cached answer, or `load()`'s, shared by every caller until the topic changes. A
   * failed load is not kept. While the cache is not serving, every call loads.
   */
  get<T>(topic: FactTopic, key: string, load: () => Promise<T>): Promise<T> {
    if (!this.listener.listening) return load();
    let entries = this.topics.get(topic);
    if (!entries) this.topics.set(topic, (entries = new Map()));
    const now = this.nowMs();
    const cached = entries.get(key);
    if (cached && now - cached.at <= this.maxAgeMs) return cached.value as Promise<T>;
    if (entries.size >= NOTICE_CACHE_ENTRIES_MAX) entries.clear();
    // Stored before the read starts: a notice that arrives while it runs clears it, so an answer that may predate a
    // change serves only the callers that were already waiting for it.
    const value = load();
    const entry: Entry = { value, at: now };
    entries.set(key, entry);
    value.catch(() => {
      if (entries.get(key) === entry) entries.delete(key);
    });
    return value;
  }

  /**
   * Forgets a topic at once: a change this process has just committed is then read back by its next request without
   * waiting for the notice (which still reaches every other process).
   */
  drop(topic: FactTopic): void {
    this.topics.get(topic)?.clear();
  }

  close(): Promise<void> {
    this.topics.clear();
    return this.listener.close();
  }
}
