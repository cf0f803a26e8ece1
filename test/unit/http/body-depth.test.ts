// The body's nesting check skips strings quote to quote; it agrees with a character-by-character
// scan on generated JSON (escaped quotes and backslash runs inside strings, brackets in strings).
import test from 'ava';
import { nestedDeeperThan } from '../../../src/http/body.ts';

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

let seed = 7;
const rnd = (n: number) => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed % n;
};
const pieces = ['a', '"', '\\', '[', ']', '{', '}', 'x\\"y', '\\\\', '[[', ']]'];
const str = () => Array.from({ length: rnd(12) }, () => pieces[rnd(pieces.length)]).join('');
function value(d: number): unknown {
  const k = rnd(d > 12 ? 2 : 5);
  if (k === 0) return str();
  if (k === 1) return rnd(1000);
  if (k === 2) return Array.from({ length: rnd(4) }, () => value(d + 1));
  return Object.fromEntries(Array.from({ length: rnd(4) }, () => [str(), value(d + 1)]));
}

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
