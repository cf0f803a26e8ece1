// Ed25519 through node:crypto agrees with an independent implementation (tweetnacl) both ways.
import test from 'ava';
import nacl from 'tweetnacl';
import { Keypair } from '@solana/web3.js';
import { signDetached, verifyDetached } from '../../../src/clob/ed25519.ts';

test('signatures agree with tweetnacl both ways; tampering, wrong keys and bad lengths fail', (t) => {
  for (let i = 0; i < 20; i++) {
    const kp = Keypair.generate();
    const msg = Buffer.from(`clob-auth:v1:${kp.publicKey.toBase58()}:${1763900000 + i}`);
    const ours = signDetached(msg, kp.secretKey);
    t.deepEqual(Buffer.from(ours), Buffer.from(nacl.sign.detached(msg, kp.secretKey)), 'ed25519 is deterministic: same bytes');
    t.true(nacl.sign.detached.verify(msg, ours, kp.publicKey.toBytes()));
    t.true(verifyDetached(msg, nacl.sign.detached(msg, kp.secretKey), kp.publicKey.toBytes()));
    const bad = Buffer.from(ours);
    bad[i % 64] ^= 1;
    t.false(verifyDetached(msg, bad, kp.publicKey.toBytes()));
    t.false(verifyDetached(Buffer.concat([msg, Buffer.from('x')]), ours, kp.publicKey.toBytes()));
    t.false(verifyDetached(msg, ours, Keypair.generate().publicKey.toBytes()));
  }
  t.false(verifyDetached(Buffer.from('m'), new Uint8Array(63), new Uint8Array(32)));
  t.false(verifyDetached(Buffer.from('m'), new Uint8Array(64), new Uint8Array(31)));
  t.false(verifyDetached(Buffer.from('m'), new Uint8Array(64), new Uint8Array(32).fill(255)), 'not a curve point: false, no throw');
});
