// The body's string check skips its walk when the text has no `\u` escape; it agrees with the walk
// on generated JSON holding NULs, unpaired surrogates, other escapes and raw non-ASCII text.
import test from 'ava';
import { uncleanString, uncleanStringIn } from '../../../src/http/body.ts';

let seed = 11;
const rnd = (n: number) => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed % n;
};
// JSON.stringify writes NUL and the other control characters and every unpaired surrogate as `\u`
// escapes, quotes and backslashes as `\"` and `\\`, and the rest (é, 😀, CJK) as raw UTF-8.
const pieces = ['a', '\u0000', '\ud800', '\udfff', '😀', 'é', '\u0001', '"', '\\', '\\u0000', 'u0000', '\n', '漢'];
const str = () => Array.from({ length: rnd(6) }, () => pieces[rnd(pieces.length)]).join('');
function value(d: number): unknown {
  const k = rnd(d > 6 ? 2 : 5);
  if (k === 0) return str();
  if (k === 1) return rnd(1000);
  if (k === 2) return Array.from({ length: rnd(4) }, () => value(d + 1));
  return Object.fromEntries(Array.from({ length: rnd(4) }, () => [str(), value(d + 1)]));
}

test('uncleanStringIn agrees with the walk on generated JSON, and skips it only where no escape could hide a NUL or a surrogate', (t) => {
  let skipped = 0;
  let unclean = 0;
  for (let n = 0; n < 5000; n++) {
    const text = JSON.stringify([value(1), value(1)]);
    const parsed = JSON.parse(text);
    const walked = uncleanString(parsed);
    t.is(uncleanStringIn(text, parsed), walked, text);
    if (!text.includes('\\u')) skipped++;
    if (walked) unclean++;
  }
  t.log(`${skipped} of 5000 texts skipped the walk, ${unclean} unclean`);
  t.true(skipped > 500 && unclean > 500, 'both kinds were generated');
  // Written by hand: an escaped backslash before `u0000` is no NUL, but still walked (and clean).
  t.is(uncleanStringIn('{"a":"x\\\\u0000"}', { a: 'x\\u0000' }), null);
  t.is(uncleanStringIn('{"a":"\\u00e9"}', { a: 'é' }), null);
  t.is(uncleanStringIn('{"a\\u0000":1}', { 'a\u0000': 1 }), 'a NUL character');
  t.is(uncleanStringIn('["\\ud800"]', ['\ud800']), 'an unpaired surrogate');
});
