/**
 * The row at which each key (a SKU, a GTIN) first appeared in an import, held compactly: the keys'
 * UTF-8 bytes in one growing buffer and the rest in typed arrays, about 20 bytes a key beside its
 * own bytes, where a `Map<string, number>` takes 60-80 (a string object and a hash entry each).
 * Exact: keys are compared byte for byte, never by hash alone.
 */
export class FirstRows {
  private bytes = Buffer.allocUnsafe(64 * 1024);
  private used = 0;
  private starts = new Int32Array(1024);
  private lengths = new Int32Array(1024);
  private rows = new Int32Array(1024);
  private count = 0;
  /** Open addressing: entry index + 1, 0 when free; at most half full. */
  private slots = new Int32Array(2048);

  /** How many keys are held. */
  get size(): number {
    return this.count;
  }

  /** The row `key` was first added at, or undefined. */
  get(key: string): number | undefined {
    const { entry } = this.find(key);
    return entry < 0 ? undefined : this.rows[entry];
  }

  /** Remembers `key` at `row` unless it is held already; returns the row it is held at. */
  add(key: string, row: number): number {
    const { slot, entry, length } = this.find(key);
    if (entry >= 0) return this.rows[entry]!;
    if (this.count === this.starts.length) this.growEntries();
    const index = this.count++;
    this.starts[index] = this.used;
    this.lengths[index] = length;
    this.rows[index] = row;
    this.used += length;
    this.slots[slot] = index + 1;
    if (this.count * 2 > this.slots.length) this.rehash();
    return row;
  }

  /**
   * Writes `key`'s bytes after the held ones (not yet counted as held) and probes for them: the
   * free slot or the entry that holds them.
   */
  private find(key: string): { slot: number; entry: number; length: number } {
    const most = Buffer.byteLength(key);
    if (this.used + most > this.bytes.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.used + most));
      this.bytes.copy(grown, 0, 0, this.used);
      this.bytes = grown;
    }
    const length = this.bytes.write(key, this.used);
    const hash = hashOf(this.bytes, this.used, length);
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const held = this.slots[slot]! - 1;
      if (held < 0) return { slot, entry: -1, length };
      const start = this.starts[held]!;
      if (this.lengths[held] === length && this.bytes.compare(this.bytes, this.used, this.used + length, start, start + length) === 0) {
        return { slot, entry: held, length };
      }
    }
  }

  private growEntries(): void {
    const grow = (from: Int32Array) => {
      const to = new Int32Array(from.length * 2);
      to.set(from);
      return to;
    };
    this.starts = grow(this.starts);
    this.lengths = grow(this.lengths);
    this.rows = grow(this.rows);
  }

  private rehash(): void {
    this.slots = new Int32Array(this.slots.length * 2);
    const mask = this.slots.length - 1;
    for (let entry = 0; entry < this.count; entry++) {
      let slot = hashOf(this.bytes, this.starts[entry]!, this.lengths[entry]!) & mask;
      while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
      this.slots[slot] = entry + 1;
    }
  }
}

/** FNV-1a over `length` bytes from `start`. */
function hashOf(bytes: Buffer, start: number, length: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < start + length; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  return hash >>> 0;
}
