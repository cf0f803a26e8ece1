// The signed order's addresses: decoded once and then taken from memory (src/clob/signed-order.ts).
// Whatever is remembered, the answers stay those of a fresh decode: the same bytes, the same
// refusals, the same order hash and signature check as the reference encoding (bs58, Solana keys).
import test from 'ava';
import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import { Keypair } from '@solana/web3.js';
import { addressBytes, orderHash, placeOrderBody, verifyOrderSignature } from '../../../src/clob/signed-order.ts';
import { order as clobOrder } from '../../helpers/clob.ts';

// The test helper's signed BUY of 2 at 0.5, its salt fixed.
const order = (kp: Keypair, tokenId: string, salt: number) => clobOrder(kp, tokenId, 'BUY', '0.5', '2', { salt: String(salt) });

test('an address decodes to its 32 bytes, the first time and every time after', (t) => {
  for (let i = 0; i < 50; i++) {
    const key = Keypair.generate().publicKey;
    const text = key.toBase58();
    t.deepEqual(Buffer.from(addressBytes(text)!), Buffer.from(key.toBytes()));
    t.deepEqual(Buffer.from(addressBytes(text)!), Buffer.from(key.toBytes()), 'from memory');
  }
  t.deepEqual(Buffer.from(addressBytes('11111111111111111111111111111111')!), Buffer.alloc(32));
});

test('what is not a 32-byte address is refused, also after a valid one was remembered', (t) => {
  const valid = Keypair.generate().publicKey.toBase58();
  addressBytes(valid);
  const refused = [
    '',
    'x'.repeat(31), // too short to be 32 bytes
    '1'.repeat(45), // too long before decoding
    `${valid.slice(0, -1)}0`, // '0' is not base58
    `${valid.slice(0, -1)}l`, // nor 'l'
    bs58.encode(Buffer.alloc(31, 7)), // 31 bytes
    bs58.encode(Buffer.alloc(33, 7)), // 33 bytes
    ` ${valid}`,
    `${valid}\u0000`,
  ];
  for (const s of refused) {
    t.is(addressBytes(s), null, JSON.stringify(s));
    t.is(addressBytes(s), null, `${JSON.stringify(s)}, asked again`);
  }
  const kp = Keypair.generate();
  const good = order(kp, valid, 1);
  for (const s of refused) {
    const r = placeOrderBody.safeParse({ order: { ...good, taker: s } });
    t.false(r.success, `taker ${JSON.stringify(s)}`);
  }
});

test('past the addresses remembered at once, each still decodes as a fresh decode does; orders still verify', (t) => {
  // More addresses than are remembered at once (10,000): memory is dropped on the way, twice.
  const texts = Array.from({ length: 25_000 }, () => bs58.encode(randomBytes(32)));
  let wrong = 0;
  for (const round of [0, 1])
    for (const [i, s] of texts.entries()) {
      const b = addressBytes(s);
      if (!b || (i % 97 === round && !Buffer.from(b).equals(Buffer.from(bs58.decode(s))))) wrong++;
    }
  t.is(wrong, 0);
  const kp = Keypair.generate();
  const token = texts[0];
  for (let i = 0; i < 20; i++) {
    const o = placeOrderBody.parse({ order: order(kp, token, i) }).order;
    const hash = orderHash(o);
    t.true(verifyOrderSignature(o, hash));
    t.false(verifyOrderSignature({ ...o, signer: texts[i + 1] }, hash), 'another signer');
    t.false(verifyOrderSignature(o, orderHash({ ...o, tokenId: texts[i + 1] })), 'another order');
  }
});
