// A node's close: parts stop last-started first; one that fails or never stops does not keep the
// others running, and one that never stops is named.
import test from 'ava';
import { Lifecycle } from '../../../src/lifecycle.ts';

test('parts stop in reverse; a failing part and a part that never stops are named, and the rest still stop', async (t) => {
  const errors: { part?: string; m?: string }[] = [];
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);
  process.on('warning', onWarning);
  t.teardown(() => process.off('warning', onWarning));
  const life = new Lifecycle({ error: (o: any, m) => errors.push({ part: o.part, m }) }, 100);
  const order: string[] = [];
  life.defer('database', () => order.push('database'));
  life.defer('stuck', () => new Promise(() => undefined));
  life.defer('failing', () => {
    throw new Error('boom');
  });
  life.defer('http', async () => {
    order.push('http');
  });
  const started = Date.now();
  await life.close();
  t.deepEqual(order, ['http', 'database']);
  t.true(Date.now() - started < 5_000);
  t.deepEqual(
    errors.map((e) => e.part),
    ['failing', 'stuck'],
  );
  await new Promise((r) => setImmediate(r));
  t.true(
    warnings.some((w) => w.includes('stuck did not stop within 100 ms')),
    warnings.join('; '),
  );
  // Once: a second close is the first one.
  await life.close();
  t.deepEqual(order, ['http', 'database']);
});
