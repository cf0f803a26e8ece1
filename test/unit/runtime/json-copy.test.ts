// jsonCopy (src/runtime/json.ts) hands a reply to a reader in the same process as JSON would have
// carried it: whatever the value, it equals JSON.parse(bigJson(value)) whenever that has an answer.
import test from 'ava';
import fc from 'fast-check';
import { bigJson, jsonCopy } from '../../../src/runtime/json.ts';

const anything = fc.anything({
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withObjectString: true,
  withSparseArray: true,
  withTypedArray: true,
  key: fc.oneof(fc.string(), fc.constantFrom('__proto__', 'toJSON', 'constructor', '0', '-0', '1e3')),
  maxDepth: 4,
});
const odd = fc.constantFrom<unknown>(
  -0,
  NaN,
  Infinity,
  -Infinity,
  undefined,
  () => 1,
  Symbol('s'),
  new Date(0),
  new Date(NaN),
  Buffer.from('ab'),
  { toJSON: () => undefined },
  { toJSON: (k: string) => ({ key: k, n: 2n }) },
  [undefined, () => 1, Symbol('s'), 1n],
  Object.assign(Object.create({ inherited: 1 }), { own: 2 }),
);

/** JSON's answer, or a marker when JSON has none (it throws, or the value has no text). */
function viaText(v: unknown): unknown {
  let text: string | undefined;
  try {
    text = bigJson(v);
  } catch {
    return NONE;
  }
  return text === undefined ? NONE : JSON.parse(text);
}
const NONE = Symbol('no JSON');

test('the copy is what JSON would have given, for anything JSON answers', (t) => {
  let compared = 0;
  fc.assert(
    fc.property(fc.oneof(anything, odd, fc.array(fc.oneof(anything, odd)), fc.dictionary(fc.string(), fc.oneof(anything, odd))), (v) => {
      const want = viaText(v);
      if (want === NONE) return true;
      compared++;
      const got = jsonCopy(v);
      // Compared as values, prototype included (JSON.parse makes plain objects and arrays).
      t.deepEqual(got, want);
      return JSON.stringify(got) === JSON.stringify(want);
    }),
    { numRuns: 3000 },
  );
  t.true(compared > 2000, `compared ${compared}`);
});

test('an own __proto__ key stays a key, the prototype stays Object.prototype', (t) => {
  const v = JSON.parse('{"__proto__": {"polluted": 1}, "a": 1n}'.replace('1n', '"1"'));
  const got = jsonCopy(v) as Record<string, unknown>;
  t.is(Object.getPrototypeOf(got), Object.prototype);
  t.deepEqual(Object.keys(got), ['__proto__', 'a']);
  t.is((got as { polluted?: unknown }).polluted, undefined);
});
