// One partitioner for both buses: Kafka's own murmur2 (the Java client's default), so that a key
// lands on the same partition whichever bus carries it, and matches other Kafka clients.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const murmur2: (key: string | Buffer) => number = require('kafkajs/src/producer/partitioners/default/murmur2.js');

export function partitionFor(key: string, partitions: number): number {
  if (partitions <= 1) return 0;
  return (murmur2(key) & 0x7fffffff) % partitions;
}
