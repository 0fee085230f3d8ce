// Deliveries a receiver has already handled, remembered for a bounded time and count: enough to handle each event
// once although the service delivers at least once (its retries) and someone may replay a captured delivery, with
// bounded memory. A real receiver keeps this in its database (a unique key on the id), so it survives restarts.
export interface SeenDeliveriesOptions {
  /** How long a key is remembered. */
  retainMs: number;
  /** Most keys remembered; the oldest go first. */
  maxEntries: number;
}

export class SeenDeliveries {
  // Insertion order is expiry order (one retention for all), so the oldest entries are always first.
  private readonly expiresAtMs = new Map<string, number>();

  constructor(private readonly options: SeenDeliveriesOptions) {}

  /**
   * Takes the key for this delivery: false when it was handled before (or is being handled right now, by a
   * concurrent retry). Call release() if handling fails, so the next retry is handled.
   */
  claim(key: string, nowMs: number): boolean {
    this.forgetExpired(nowMs);
    const expiresAt = this.expiresAtMs.get(key);
    if (expiresAt !== undefined && expiresAt > nowMs) return false;
    this.expiresAtMs.set(key, nowMs + this.options.retainMs);
    while (this.expiresAtMs.size > this.options.maxEntries) this.expiresAtMs.delete(this.expiresAtMs.keys().next().value!);
    return true;
  }

  release(key: string): void {
    this.expiresAtMs.delete(key);
  }

  private forgetExpired(nowMs: number): void {
    for (const [key, expiresAt] of this.expiresAtMs) {
      if (expiresAt > nowMs) return;
      this.expiresAtMs.delete(key);
    }
  }
}
