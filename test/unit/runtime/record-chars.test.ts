// recordChars: a record's size for the checkpoint rule, never building an in-process record's text.
import test from 'ava';
import { DECODED_COMMAND_CHARS, lazyRecord, recordChars } from '../../../src/runtime/envelope.ts';

test('a record with text counts its characters', (t) => {
  t.is(recordChars({ key: 'k', value: 'x'.repeat(37) }), 37);
});

test('an in-process record counts per command and its text is never built', (t) => {
  let built = 0;
  const text = () => {
    built++;
    return 'never read';
  };
  const bulk = lazyRecord({ key: 'k', decoded: { v: 1, at: 1, bulk: [{}, {}, {}] } }, text);
  const one = lazyRecord({ key: 'k', decoded: { v: 1, at: 1, cmd: {} } }, text);
  t.is(recordChars(bulk), 3 * DECODED_COMMAND_CHARS);
  t.is(recordChars(one), DECODED_COMMAND_CHARS);
  t.is(built, 0);
  t.is(bulk.value, 'never read', 'the text is still there for whoever reads it');
  t.is(built, 1);
});
