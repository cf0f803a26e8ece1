// A preload (not a test, not part of the service) that writes every commit script an embedded node
// runs on PGlite (a `select runtime_commit_batch(…)` simple query: src/store/runtime-store.ts), in
// order, for bench/pglite-replay.ts:
//   SERVICE_NODE_OPTIONS=--import=./bench/pglite-capture.ts ONLY=embedded npx tsx bench/order-ratio.ts
// One file per process, PGLITE_CAPTURE_DIR/<pid>.jsonl (default /tmp/pglite-capture), a line per
// script (its text as a JSON string). Plain erasable TypeScript: Node loads it before the service's loader.
import { mkdirSync, openSync, writeSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';

const dir = process.env.PGLITE_CAPTURE_DIR ?? '/tmp/pglite-capture';
mkdirSync(dir, { recursive: true });
const out = openSync(`${dir}/${process.pid}.jsonl`, 'w');
const COMMIT = Buffer.from('select runtime_commit_batch(');
const raw = PGlite.prototype.execProtocolRaw;
PGlite.prototype.execProtocolRaw = function (this: PGlite, message: Uint8Array, ...rest: unknown[]) {
  const b = Buffer.from(message.buffer, message.byteOffset, message.byteLength);
  // A simple query ('Q', length, text, NUL) that is a commit.
  if (b[0] === 0x51 && b.subarray(5, 5 + COMMIT.length).equals(COMMIT))
    writeSync(out, JSON.stringify(b.toString('utf8', 5, b.length - 1)) + '\n');
  return (raw as (...a: unknown[]) => ReturnType<typeof raw>).call(this, message, ...rest);
} as typeof raw;
