// The cache of verified bearer tokens: kept until `exp` (refused from the second `exp` on, as
// jsonwebtoken does), never without `exp` or with `nbf`, bounded with expired entries dropped first.
import test from 'ava';
import { VerifiedTokens, bearerOf } from '../../../src/http/verified-tokens.ts';

test('a token is kept until its exp second, then forgotten', (t) => {
  let now = 1_000_000;
  const c = new VerifiedTokens<{ sub: string; exp?: number; nbf?: number }>(10, () => now);
  c.add('a', { sub: 'w', exp: 1_002 });
  t.deepEqual(c.get('a'), { sub: 'w', exp: 1_002 });
  now = 1_001_999;
  t.truthy(c.get('a'));
  now = 1_002_000;
  t.is(c.get('a'), undefined);
  t.is(c.size, 0);
  t.is(c.get('b'), undefined);
});

test('no exp, or an nbf: never kept', (t) => {
  const c = new VerifiedTokens<{ exp?: unknown; nbf?: unknown }>(10, () => 0);
  c.add('no-exp', {});
  c.add('string-exp', { exp: '5' });
  c.add('nbf', { exp: 5, nbf: 1 });
  t.is(c.size, 0);
});

test('bounded: expired entries go first, then the oldest', (t) => {
  let now = 0;
  const c = new VerifiedTokens<{ exp: number }>(3, () => now);
  c.add('short', { exp: 1 });
  c.add('x', { exp: 100 });
  c.add('y', { exp: 100 });
  now = 2_000; // 'short' expired
  c.add('z', { exp: 100 });
  t.deepEqual([c.get('x'), c.get('y'), c.get('z')].map(Boolean), [true, true, true]);
  c.add('w', { exp: 100 }); // none expired: the oldest ('x') goes
  t.is(c.size, 3);
  t.is(c.get('x'), undefined);
  t.truthy(c.get('w'));
});

test('bearerOf reads the header as koa-jwt does', (t) => {
  t.is(bearerOf('Bearer abc'), 'abc');
  t.is(bearerOf('  bearer abc '), 'abc');
  t.is(bearerOf('Basic abc'), null);
  t.is(bearerOf('Bearer a b'), null);
  t.is(bearerOf(undefined), null);
});
