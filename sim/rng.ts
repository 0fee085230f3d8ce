// The simulator's only source of chance: one seed gives one run. Every component takes a stream forked by name, so a
// component that draws more or fewer numbers does not shift what the others draw (the same seed keeps replaying the
// same operations when a fault layer changes).

/** sfc32 over a 32-bit state: small, fast and good enough for choosing operations; not for keys. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number | string) {
    const h = hash32(String(seed));
    this.a = h ^ 0x9e3779b9;
    this.b = hash32(`${seed}/b`);
    this.c = hash32(`${seed}/c`);
    this.d = 1;
    for (let i = 0; i < 15; i++) this.next32();
  }

  private next32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** A uniform number in [0, 1). */
  next(): number {
    return this.next32() / 4294967296;
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from nothing');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** A choice weighted by the numbers given: { a: 3, b: 1 } gives a three times out of four. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as [K, number][];
    const total = entries.reduce((sum, [, w]) => sum + w, 0);
    let left = this.next() * total;
    for (const [key, w] of entries) {
      if ((left -= w) < 0) return key;
    }
    return (entries[entries.length - 1] as [K, number])[0];
  }

  /** An independent stream named by label: the same (seed, label) always gives the same stream. */
  fork(label: string): Rng {
    return new Rng(`${this.next32()}:${label}`);
  }
}

function hash32(text: string): number {
  // FNV-1a then a murmur3 finaliser, so near seeds ("1", "2") start far apart.
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
