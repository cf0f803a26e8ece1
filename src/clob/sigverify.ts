// The signature check of posted orders, as a stage of its own: on worker threads when the node has
// cores to spare, so that a node's event loop (HTTP, matching, commits) does not spend a tenth of
// its time in ed25519. On two cores shared with PostgreSQL and the load it does not pay (a thread's
// hand-offs cost more machine than they free: CLOB_SIGVERIFY_THREADS defaults to 0 there), except
// when the database runs in the node (PGlite): then one thread (src/config.ts). Orders that arrive
// in one turn of the event loop go to a thread as one message of 128-byte items (hash, signature,
// public key) and come back as one byte each; an order alone in its turn, with no batch out, is
// checked on the event loop (it has time for it, and the hand-offs would only add latency). The
// thread's code repeats ed25519.ts's check in plain CommonJS (an eval'd worker needs no loader);
// the tests hold it to the same answers.
import { Worker } from 'node:worker_threads';
import { verifyDetached } from './ed25519.ts';

/** Checks ed25519 signatures: `true` when `signature` is `publicKey`'s signature of `message`; never rejects. */
export interface SignatureVerifier {
  verify(message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array): Promise<boolean>;
  close(): Promise<void>;
}

/** On the caller's thread. */
export const inlineVerifier: SignatureVerifier = {
  verify: async (message, signature, publicKey) => verifyDetached(message, signature, publicKey),
  close: async () => {},
};

const ITEM = 128; // 32-byte message, 64-byte signature, 32-byte public key
/** Items per message to a thread: a bounded copy, answered in well under a millisecond. */
const MAX_BATCH = 256;

// Plain CommonJS so that it runs as it is, whatever loader the node runs under. The same checks as
// ed25519.ts (Node's crypto, imported keys cached); a key that is not a curve point is refused.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createPublicKey, verify } = require('node:crypto');
const keys = new Map();
parentPort.on('message', ({ id, buf }) => {
  const b = Buffer.from(buf);
  const n = b.length / ${ITEM};
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const at = i * ${ITEM};
    const x = b.toString('base64url', at + 96, at + 128);
    try {
      let key = keys.get(x);
      if (!key) {
        key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
        if (keys.size >= 50000) keys.clear();
        keys.set(x, key);
      }
      out[i] = verify(null, b.subarray(at, at + 32), key, b.subarray(at + 32, at + 96)) ? 1 : 0;
    } catch {
      out[i] = 0;
    }
  }
  parentPort.postMessage({ id, out }, [out.buffer]);
});
`;

interface Item {
  message: Uint8Array;
  signature: Uint8Array;
  publicKey: Uint8Array;
  resolve(ok: boolean): void;
}

interface Lane {
  worker: Worker | null;
  /** Batches sent and not answered, by id. */
  inFlight: Map<number, Item[]>;
}

/** Threads lost in a row (none answering in between) after which the pool checks on the caller's thread. */
const MAX_FAILURES = 3;

/**
 * `threads` worker threads. A thread that fails or exits hands its unanswered items to the caller's
 * thread and is started again on its next batch; a check is never lost or answered twice. After
 * MAX_FAILURES threads lost in a row, every check stays on the caller's thread. `source`: the
 * thread's code (tests give a broken one).
 */
export function threadVerifier(threads: number, source = WORKER_SOURCE): SignatureVerifier {
  const lanes: Lane[] = Array.from({ length: threads }, () => ({ worker: null, inFlight: new Map() }));
  let queue: Item[] = [];
  let scheduled = false;
  let nextId = 0;
  let nextLane = 0;
  let closed = false;
  let failures = 0;

  const inline = (items: Item[]) => {
    for (const it of items) it.resolve(verifyDetached(it.message, it.signature, it.publicKey));
  };

  const lost = (lane: Lane, worker: Worker) => {
    if (lane.worker !== worker) return;
    lane.worker = null;
    if (!closed) failures++;
    const pending = [...lane.inFlight.values()].flat();
    lane.inFlight.clear();
    inline(pending);
  };

  const start = (lane: Lane): Worker => {
    const worker = new Worker(source, { eval: true, execArgv: [], env: {} });
    worker.unref(); // an idle pool never keeps a node alive
    worker.on('message', ({ id, out }: { id: number; out: Uint8Array }) => {
      const items = lane.inFlight.get(id);
      if (!items) return;
      lane.inFlight.delete(id);
      failures = 0;
      for (let i = 0; i < items.length; i++) items[i].resolve(out[i] === 1);
    });
    worker.on('error', () => lost(lane, worker));
    worker.on('exit', () => lost(lane, worker));
    lane.worker = worker;
    return worker;
  };

  const send = (items: Item[]) => {
    const lane = lanes[nextLane];
    nextLane = (nextLane + 1) % lanes.length;
    const worker = lane.worker ?? start(lane);
    const buf = new Uint8Array(items.length * ITEM);
    items.forEach((it, i) => {
      buf.set(it.message, i * ITEM);
      buf.set(it.signature, i * ITEM + 32);
      buf.set(it.publicKey, i * ITEM + 96);
    });
    const id = nextId++;
    lane.inFlight.set(id, items);
    try {
      worker.postMessage({ id, buf: buf.buffer }, [buf.buffer]);
    } catch {
      lane.inFlight.delete(id);
      inline(items);
    }
  };

  const flush = () => {
    scheduled = false;
    const items = queue;
    queue = [];
    if (closed || failures >= MAX_FAILURES) return inline(items);
    // One order alone, no batch out: the event loop has time for it, and a thread's round trip
    // would only add its hand-offs to that order's latency. Orders that arrive together, or while
    // a batch is out (the event loop is busy), go to the threads.
    if (items.length === 1 && lanes.every((l) => l.inFlight.size === 0)) return inline(items);
    // Spread over the threads, in batches of at most MAX_BATCH.
    const per = Math.min(MAX_BATCH, Math.ceil(items.length / lanes.length));
    for (let i = 0; i < items.length; i += per) send(items.slice(i, i + per));
  };

  return {
    verify(message, signature, publicKey) {
      if (message.length !== 32 || signature.length !== 64 || publicKey.length !== 32 || closed)
        return Promise.resolve(verifyDetached(message, signature, publicKey));
      return new Promise<boolean>((resolve) => {
        queue.push({ message, signature, publicKey, resolve });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    async close() {
      closed = true;
      await Promise.all(
        lanes.map(async (lane) => {
          const w = lane.worker;
          if (!w) return;
          await w.terminate();
          lost(lane, w);
        }),
      );
    },
  };
}

/** `threads` 0: on the caller's thread. */
export const signatureVerifier = (threads: number): SignatureVerifier => (threads > 0 ? threadVerifier(threads) : inlineVerifier);
