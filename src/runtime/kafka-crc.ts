// kafkajs, with the CRC-32C of its record batches computed natively. kafkajs 2.2.4 computes the
// checksum of every batch it produces in JavaScript, a byte at a time: ~390 MB/s here, 6–9 µs of a
// node's CPU per ingested webhook event (every command, reply and ledger record is checksummed).
// @node-rs/crc32's `crc32c` gives the same value at 9–24 GB/s. kafkajs takes the function from its
// own module (`require('../crc32C')`), so that module is put in the CommonJS cache, holding the
// native function, before kafkajs is first loaded; kafka-bus.ts loads kafkajs from here. Should the
// native module not load on a platform, or kafkajs have been loaded before (a tool that imported it
// first), kafkajs keeps its own function: slower, never wrong.
import Module, { createRequire } from 'node:module';
import type * as KafkaJs from 'kafkajs';
import { fixKafkajsRequestQueue } from './kafka-request-queue.ts';

const require = createRequire(import.meta.url);

/** kafkajs's CRC-32C module: `buffer => unsigned crc32c(buffer)`. */
const CRC_MODULE = 'kafkajs/src/protocol/recordBatch/crc32C/index.js';

function nativeCrc(): ((buffer: Buffer) => number) | null {
  try {
    const { crc32c } = require('@node-rs/crc32') as { crc32c(input: Buffer, initial?: number): number };
    // Unsigned, as kafkajs's own (the Kafka protocol writes it as a uint32).
    return (buffer: Buffer) => crc32c(buffer) >>> 0;
  } catch {
    return null;
  }
}

function install(): ((buffer: Buffer) => number) | null {
  const path = require.resolve(CRC_MODULE);
  if (require.cache[path]) return null; // kafkajs came first: its own function stays
  const crc = nativeCrc();
  if (!crc) return null;
  const m = new Module(path);
  m.filename = path;
  m.loaded = true;
  m.exports = crc;
  require.cache[path] = m;
  return crc;
}

const installed = install();

/** kafkajs itself, loaded after its checksum module was replaced; its request queue without its idle loop. */
export const kafkajs = require('kafkajs') as typeof KafkaJs;
fixKafkajsRequestQueue();

/** Whether kafkajs checksums record batches natively in this process (false: its own JavaScript). */
export function nativeKafkaCrc(): boolean {
  return installed !== null && require.cache[require.resolve(CRC_MODULE)]?.exports === installed;
}
