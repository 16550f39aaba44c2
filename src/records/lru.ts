/**
 * A bounded least-recently-used map: the one shape every hot-path cache in
 * Baton takes, so no cache grows with traffic (issue #15 "bounded memory").
 */
export class Lru<K, V> {
  private readonly map = new Map<K, V>();

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError('an LRU holds at least one entry');
  }

  get size(): number {
    return this.map.size;
  }

  /** The value, refreshed as most recently used. */
  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, v);
    return v;
  }

  /** Inserts or refreshes; evicts the least recently used entry beyond `max`. */
  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as K);
  }

  /** Drops `key`, if held. */
  delete(key: K): void {
    this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
  }
}
