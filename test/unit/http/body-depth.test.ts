// The body's nesting check skips strings quote to quote; it agrees with a character-by-character
// scan on generated JSON (escaped quotes and backslash runs inside strings, brackets in strings).
import test from 'ava';
import { nestedDeeperThan } from '../../../src/http/body.ts';
import { randomJson } from '../../helpers/random-json.ts';

/** The reference: every character visited, a backslash skipping the next one inside a string. */
function reference(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') {
      if (++depth > max) return true;
    } else if (c === '}' || c === ']') depth--;
  }
  return false;
}

const value = randomJson({
  seed: 7,
  pieces: ['a', '"', '\\', '[', ']', '{', '}', 'x\\"y', '\\\\', '[[', ']]'],
  pieceRuns: 12,
  deep: 12,
});

test('nestedDeeperThan agrees with a character scan on generated JSON', (t) => {
  for (let n = 0; n < 3000; n++) {
    const text = JSON.stringify(value(0));
    for (const max of [1, 2, 4, 8, 64]) if (nestedDeeperThan(text, max) !== reference(text, max)) t.fail(`${text} at ${max}`);
  }
  t.true(nestedDeeperThan('['.repeat(65) + ']'.repeat(65), 64));
  t.false(nestedDeeperThan(`["${'['.repeat(100)}"]`, 2), 'brackets inside a string do not count');
  t.false(nestedDeeperThan(`["a\\"${'['.repeat(100)}"]`, 2), 'an escaped quote does not end the string');
  t.true(nestedDeeperThan(`["a\\\\",${'['.repeat(5)}`, 3), 'an escaped backslash before a quote ends the string');
  t.false(nestedDeeperThan(`["unterminated ${'['.repeat(9)}`, 2), 'what follows an unterminated quote is string (JSON.parse refuses it)');
});
