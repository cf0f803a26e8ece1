// How a group commit merges its members' rows statements (src/store/runtime-store.ts, mergeOrder):
// each member's statements keep their order; members of different shapes share statements.
import test from 'ava';
import { mergeOrder } from '../../../src/store/runtime-store.ts';

const member = (tag: string, ...sqls: string[]) => sqls.map((sql, i) => ({ sql, row: `${tag}${i}` }));
const show = (steps: { sql: string; row: string }[][]) => steps.map((s) => `${s[0].sql}:${s.map((x) => x.row).join(',')}`);

test('members of different shapes share their statements; each keeps its own order', (t) => {
  const a = member('a', 'upsert', 'ledger');
  const b = member('b', 'upsert', 'update', 'ledger');
  const c = member('c', 'update', 'ledger');
  t.deepEqual(show(mergeOrder([a, b, c])), ['upsert:a0,b0', 'update:b1,c0', 'ledger:a1,b2,c1']);
});

test('a statement a member has twice, or in another order than others, still keeps every member in order', (t) => {
  const a = member('a', 'upsert', 'update', 'upsert');
  const b = member('b', 'update', 'upsert');
  const steps = mergeOrder([a, b]);
  // Every row once, and per member in its own order.
  const flat = steps.flat();
  t.is(flat.length, 5);
  for (const m of [a, b])
    t.deepEqual(
      flat.filter((x) => m.includes(x)).map((x) => x.row),
      m.map((x) => x.row),
    );
  // Each step is one statement over rows of the same text.
  for (const s of steps) t.true(s.every((x) => x.sql === s[0].sql));
  t.true(steps.length < 5, `${steps.length} statements for 5`);
});

test('no members, or empty ones: no statement', (t) => {
  t.deepEqual(mergeOrder([]), []);
  t.deepEqual(mergeOrder([[], []]), []);
});
