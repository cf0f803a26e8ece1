// The runtime's JSON helpers: a bigint becomes its decimal string, whichever helper writes it, and
// both write the same text (the answers' helper only skips the throw of the plain attempt).
import test from 'ava';
import { bigJson, toJson } from '../../../src/runtime/json.ts';

const answer = {
  status: 'live',
  orderID: '0x' + 'ab'.repeat(32),
  sizeMatched: 0n,
  remaining: 18446744073709551615n,
  tradeIDs: [],
  fills: [{ price: 600000, size: -2000000n, at: null }],
};

test('bigints are written as decimal strings by both helpers, with the same text', (t) => {
  const text = bigJson(answer);
  t.is(text, toJson(answer));
  const back = JSON.parse(text);
  t.is(back.remaining, '18446744073709551615');
  t.is(back.sizeMatched, '0');
  t.deepEqual(back.fills, [{ price: 600000, size: '-2000000', at: null }]);
});

test('without a bigint the text is plain JSON', (t) => {
  const plain = { a: 1, b: ['x', null, true], c: { d: 'e' } };
  t.is(bigJson(plain), JSON.stringify(plain));
  t.is(toJson(plain), JSON.stringify(plain));
});
