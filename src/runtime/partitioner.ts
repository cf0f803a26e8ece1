// One partitioner for both buses: Kafka's own murmur2 (the Java client's default), so that a key
// lands on the same partition whichever bus carries it, and matches other Kafka clients.
//
// The hash is written here in 32-bit integer arithmetic (Math.imul): kafkajs's copy of it computes
// in 64-bit Long objects and cost 3.4 µs a key, the asker's largest cost in a webhook delivery.
// test/unit/runtime/partitioner.test.ts holds it to kafkajs's on random and non-ASCII keys.

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** Kafka's murmur2 of a key's UTF-8 bytes (a signed 32-bit integer, as the Java client returns it). */
export function murmur2(key: string): number {
  const data = ascii(key) ? null : Buffer.from(key, 'utf8');
  const length = data ? data.length : key.length;
  const at = data ? (i: number) => data[i] : (i: number) => key.charCodeAt(i);
  let h = SEED ^ length;
  const length4 = length >>> 2;
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4;
    let k = at(i4) | (at(i4 + 1) << 8) | (at(i4 + 2) << 16) | (at(i4 + 3) << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const tail = length & ~3;
  switch (length & 3) {
    case 3:
      h ^= at(tail + 2) << 16;
    // falls through
    case 2:
      h ^= at(tail + 1) << 8;
    // falls through
    case 1:
      h ^= at(tail);
      h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

function ascii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 127) return false;
  return true;
}

export function partitionFor(key: string, partitions: number): number {
  if (partitions <= 1) return 0;
  return (murmur2(key) & 0x7fffffff) % partitions;
}
