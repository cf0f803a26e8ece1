// The let-go filter of a market book (actors/market-book/let-go.ts): never a "no" for an order it
// holds, few "maybe"s for orders it does not (measured at 100,000 orders and at its cap), the same
// bits for the same orders whatever else happened, and through its snapshot form.
import test from 'ava';
import { createHash } from 'node:crypto';
import { addLetGo, emptyLetGo, LET_GO_CAP, letGoIn, letGoOut, mayHaveLetGo } from '../../../../actors/market-book/let-go.ts';

const orderHash = (i: number, salt = 'a') => '0x' + createHash('sha256').update(`${salt}${i}`).digest('hex');

function falseMaybes(f: ReturnType<typeof emptyLetGo>, n: number): number {
  let hits = 0;
  for (let i = 0; i < n; i++) if (mayHaveLetGo(f, orderHash(i, 'never'))) hits++;
  return hits / n;
}

test('holds every order added; few false maybes; full at its cap', (t) => {
  const f = emptyLetGo();
  for (let i = 0; i < 100_000; i++) if (!addLetGo(f, orderHash(i))) t.fail(`refused order ${i}`);
  for (let i = 0; i < 100_000; i += 7) if (!mayHaveLetGo(f, orderHash(i))) t.fail(`lost order ${i}`);
  const at100k = falseMaybes(f, 50_000);
  t.true(at100k < 0.002, `false maybes at 100,000 orders: ${at100k}`);
  for (let i = 100_000; i < LET_GO_CAP; i++) addLetGo(f, orderHash(i));
  t.is(f.count, LET_GO_CAP);
  const atCap = falseMaybes(f, 50_000);
  t.true(atCap < 0.05, `false maybes at the cap: ${atCap}`);
  t.false(addLetGo(f, orderHash(-1)), 'full: refused');
  t.is(f.count, LET_GO_CAP);
  for (let i = 0; i < LET_GO_CAP; i += 97) if (!mayHaveLetGo(f, orderHash(i))) t.fail(`lost order ${i}`);
});

test('hashes that are not uniform spread too (the filter does not trust its input)', (t) => {
  const f = emptyLetGo();
  for (let i = 0; i < 20_000; i++) addLetGo(f, `0x${i.toString(16).padStart(64, '0')}`);
  let hits = 0;
  for (let i = 20_000; i < 40_000; i++) if (mayHaveLetGo(f, `0x${i.toString(16).padStart(64, '0')}`)) hits++;
  t.true(hits / 20_000 < 0.001, `false maybes: ${hits}`);
});

test('the same orders give the same bits; the snapshot form round-trips and refuses another size', (t) => {
  const a = emptyLetGo();
  const b = emptyLetGo();
  for (let i = 0; i < 5_000; i++) addLetGo(a, orderHash(i));
  for (let i = 0; i < 5_000; i++) addLetGo(b, orderHash(i));
  t.deepEqual(a, b);
  const back = letGoIn(JSON.parse(JSON.stringify(letGoOut(a))));
  t.deepEqual(back, a);
  t.throws(() => letGoIn({ bits: 'AAAA', count: 1 }), { message: /size/ });
  t.throws(() => letGoIn({ ...letGoOut(a), count: -1 }), { message: /size/ });
});
