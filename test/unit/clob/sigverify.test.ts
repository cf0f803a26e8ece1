// The signature stage (src/clob/sigverify.ts): on worker threads it answers every check exactly as
// the check on the event loop does (valid, another message, another key, a key off the curve, a
// short signature), for checks that arrive together and one at a time; a pool that is closed with
// checks in flight answers them on the caller's thread, and checks after that too; so does a pool
// whose threads die at start. A lone check with no batch out is answered on the event loop; checks
// that arrive together, or while a batch is out, go to a thread.
import test from 'ava';
import { createHash, randomBytes } from 'node:crypto';
import { Keypair } from '@solana/web3.js';
import { signDetached, verifyDetached } from '../../../src/clob/ed25519.ts';
import { checkOrderSignature, orderHash, verifyOrderSignature } from '../../../src/clob/signed-order.ts';
import { inlineVerifier, threadVerifier } from '../../../src/clob/sigverify.ts';
import { order } from '../../helpers/clob.ts';
import { availableParallelism } from 'node:os';
import { defaultSigverifyThreads, loadConfig } from '../../../src/config.ts';

interface Case {
  message: Uint8Array;
  signature: Uint8Array;
  publicKey: Uint8Array;
}

function cases(n: number): Case[] {
  const out: Case[] = [];
  for (let i = 0; i < n; i++) {
    const kp = Keypair.generate();
    const message = createHash('sha256').update(`m${i}`).digest();
    const signature = signDetached(message, kp.secretKey);
    const publicKey = kp.publicKey.toBytes();
    switch (i % 6) {
      case 0:
        out.push({ message, signature, publicKey });
        break;
      case 1: // another message
        out.push({ message: createHash('sha256').update(`other${i}`).digest(), signature, publicKey });
        break;
      case 2: // another key
        out.push({ message, signature, publicKey: Keypair.generate().publicKey.toBytes() });
        break;
      case 3: {
        // a key that is not a point of the curve (y = 2 has no x)
        const off = new Uint8Array(32);
        off[0] = 2;
        out.push({ message, signature, publicKey: off });
        break;
      }
      case 4: // a short signature
        out.push({ message, signature: signature.subarray(0, 63), publicKey });
        break;
      default: // a message that is not a 32-byte hash (checked on the caller's thread)
        out.push({ message: randomBytes(40), signature, publicKey });
    }
  }
  return out;
}

test('through the pool, every check answers as on the event loop, together and one at a time', async (t) => {
  const v = threadVerifier(2);
  try {
    const cs = cases(120);
    const expected = cs.map((c) => verifyDetached(c.message, c.signature, c.publicKey));
    t.true(expected.filter(Boolean).length >= 20, 'the valid ones are valid');
    t.deepEqual(await Promise.all(cs.map((c) => v.verify(c.message, c.signature, c.publicKey))), expected, 'together');
    const one: boolean[] = [];
    for (const c of cs.slice(0, 24)) one.push(await v.verify(c.message, c.signature, c.publicKey));
    t.deepEqual(one, expected.slice(0, 24), 'one at a time');
  } finally {
    await v.close();
  }
});

test('a lone check with no batch out stays on the event loop; checks together, or while a batch is out, go to a thread', async (t) => {
  // A thread that takes its batches and never answers: what was sent to it stays pending until close.
  const v = threadVerifier(1, "require('node:worker_threads').parentPort.on('message', () => {})");
  const cs = cases(4);
  const expected = cs.map((c) => verifyDetached(c.message, c.signature, c.publicKey));
  const check = (i: number) => v.verify(cs[i].message, cs[i].signature, cs[i].publicKey);
  const PENDING = 'pending';
  const within = <T>(p: Promise<T>) => Promise.race([p, new Promise<string>((r) => setTimeout(() => r(PENDING), 300))]);
  try {
    t.is(await within(check(0)), expected[0], 'alone, nothing out: answered on the event loop');
    const together = [check(1), check(2)];
    t.is(await within(together[0]), PENDING, 'two in one turn: sent to the thread');
    const third = check(3);
    t.is(await within(third), PENDING, 'alone while a batch is out: sent to the thread too');
    await v.close(); // what was out is answered on the caller's thread
    t.deepEqual(await Promise.all([...together, third]), expected.slice(1));
  } finally {
    await v.close();
  }
});

test("an order's signature checked through the stage: the same answer as verifyOrderSignature", async (t) => {
  const v = threadVerifier(1);
  try {
    const kp = Keypair.generate();
    const o = order(kp, Keypair.generate().publicKey.toBase58(), 'BUY', '0.5', '2', { salt: '7' });
    const hash = orderHash(o);
    t.true(verifyOrderSignature(o, hash));
    t.true(await checkOrderSignature(v, o, hash));
    t.true(await checkOrderSignature(inlineVerifier, o, hash));
    const forged = { ...o, signer: Keypair.generate().publicKey.toBase58() };
    t.false(await checkOrderSignature(v, forged, hash), 'another signer');
    t.false(await checkOrderSignature(v, { ...o, signature: '0OIl' }, hash), 'not base58');
  } finally {
    await v.close();
  }
});

test('closed with checks in flight: each is answered once, on the caller’s thread; later ones too', async (t) => {
  const v = threadVerifier(1);
  const cs = cases(300);
  const expected = cs.map((c) => verifyDetached(c.message, c.signature, c.publicKey));
  const answers = cs.map((c) => v.verify(c.message, c.signature, c.publicKey));
  // The batch leaves on the next turn; close while it is on the thread.
  await new Promise((r) => setImmediate(r));
  await v.close();
  t.deepEqual(await Promise.all(answers), expected);
  t.deepEqual(
    await Promise.all(cs.slice(0, 12).map((c) => v.verify(c.message, c.signature, c.publicKey))),
    expected.slice(0, 12),
    'after close',
  );
});

test('threads that die at start: every check is answered, on the caller’s thread, as it should be', async (t) => {
  const v = threadVerifier(2, "throw new Error('a thread that cannot start')");
  try {
    const cs = cases(60);
    const expected = cs.map((c) => verifyDetached(c.message, c.signature, c.publicKey));
    for (let round = 0; round < 5; round++)
      t.deepEqual(await Promise.all(cs.map((c) => v.verify(c.message, c.signature, c.publicKey))), expected, `round ${round}`);
  } finally {
    await v.close();
  }
});

test('threads by default: one per core beyond two (at most 4); on 2–3 cores one only with the database in the node', (t) => {
  const at = (cores: number) => [defaultSigverifyThreads(cores, true), defaultSigverifyThreads(cores, false)];
  t.deepEqual(at(1), [0, 0]);
  t.deepEqual(at(2), [1, 0], 'PGlite on the event loop: the other core checks signatures; PostgreSQL and the broker need it');
  t.deepEqual(at(3), [1, 0]);
  t.deepEqual(at(4), [2, 2]);
  t.deepEqual(at(16), [4, 4]);
  t.is(loadConfig({ CLOB_SIGVERIFY_THREADS: '0' }).sigverifyThreads, 0, 'the setting wins');
  t.is(loadConfig({}).sigverifyThreads, defaultSigverifyThreads(availableParallelism(), true));
  t.is(loadConfig({ DATABASE_URL: 'postgres://x/y' }).sigverifyThreads, defaultSigverifyThreads(availableParallelism(), false));
});
