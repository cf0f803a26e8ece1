// The webhook's signature check (the base58 text of exactly 64 bytes, decided without decoding)
// agrees with decoding the text, on random signatures and on the edges: leading zero bytes, the
// bounds of each byte length, one character more or less.
import test from 'ava';
import bs58 from 'bs58';
import { randomBytes } from 'node:crypto';
import { isSignature } from '../../../src/parlay/webhook-schema.ts';

const decoded64 = (s: string) => {
  if (s.length < 64 || s.length > 88 || !/^[1-9A-HJ-NP-Za-km-z]+$/.test(s)) return false;
  return bs58.decode(s).length === 64;
};

test('isSignature agrees with decoding on random, boundary and mutated texts', (t) => {
  const texts: string[] = [];
  for (let i = 0; i < 3000; i++) {
    const b = randomBytes([63, 64, 65][i % 3]);
    b.fill(0, 0, Math.min(i % 70, b.length));
    const s = bs58.encode(b);
    texts.push(s, `${s}z`, s.slice(1), `1${s}`, `${s.slice(0, -1)}1`, `${s.slice(0, -1)}z`);
  }
  for (let k = 0; k <= 64; k++) {
    texts.push(bs58.encode(Uint8Array.from({ length: 64 }, (_, i) => (i < k ? 0 : 255))));
    texts.push(bs58.encode(Uint8Array.from({ length: 64 }, (_, i) => (i < k ? 0 : i === k ? 1 : 0))));
  }
  texts.push('1'.repeat(64), '1'.repeat(65), 'z'.repeat(88), 'z'.repeat(87), 'O'.repeat(64), '');
  let accepted = 0;
  for (const s of texts) {
    const want = decoded64(s);
    if (want) accepted++;
    if (isSignature(s) !== want) t.fail(`${s}: ${!want}, decoding says ${want}`);
  }
  t.true(accepted > 3000, 'random 64-byte signatures are accepted');
  t.true(isSignature('1'.repeat(64)), '64 zero bytes');
  t.false(isSignature('1'.repeat(65)), '65 zero bytes');
});
