// The body's string check skips its walk when the text has no `\u` escape; it agrees with the walk
// on generated JSON holding NULs, unpaired surrogates, other escapes and raw non-ASCII text.
import test from 'ava';
import { uncleanString, uncleanStringIn } from '../../../src/http/body.ts';
import { randomJson } from '../../helpers/random-json.ts';

// JSON.stringify writes NUL and the other control characters and every unpaired surrogate as `\u`
// escapes, quotes and backslashes as `\"` and `\\`, and the rest (é, 😀, CJK) as raw UTF-8.
const value = randomJson({
  seed: 11,
  pieces: ['a', '\u0000', '\ud800', '\udfff', '😀', 'é', '\u0001', '"', '\\', '\\u0000', 'u0000', '\n', '漢'],
  pieceRuns: 6,
  deep: 6,
});

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
