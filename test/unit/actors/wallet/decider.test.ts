// The Wallet decider alone: reservations against the balance, across markets, released once.
import test from 'ava';
import { available, walletDecider, type WalletEvent, type WalletState } from '../../../../actors/wallet/decider.ts';
import { deciderSpec } from '../../../helpers/decider-spec.ts';
import type { Decision } from '../../../../src/runtime/types.ts';

function runner() {
  let s: WalletState = walletDecider.initial('W');
  return {
    get state() {
      return s;
    },
    // (a reply read as any: a ReleaseOrders handed on with a cancel's answer gives that answer)
    send(cmd: any, at = 1000): Decision<WalletEvent, any> {
      const d = walletDecider.decide(s, { ...cmd, at });
      for (const e of d.events) s = walletDecider.evolve(s, e);
      return d;
    },
  };
}

test('an order reserves against the balance minus what other orders hold, across markets', (t) => {
  const w = runner();
  t.true(
    w.send({
      type: 'Reserve',
      orderId: 'o1',
      asset: 'collateral',
      amount: '60',
      market: 'm1',
      balance: { amount: '100', slot: 5 },
      holdMs: 30_000,
    }).reply.ok,
  );
  const r2 = w.send({ type: 'Reserve', orderId: 'o2', asset: 'collateral', amount: '50', market: 'm2', holdMs: 30_000 });
  t.deepEqual(r2.reply, {
    ok: false,
    code: 'INSUFFICIENT_BALANCE',
    available: '40',
    message: 'maker amount 50 exceeds the unreserved balance 40',
  });
  t.true(
    w.send({
      type: 'Reserve',
      orderId: 'o3',
      asset: 'tokenA',
      amount: '5',
      market: 'm1',
      balance: { amount: '5', slot: 5 },
      holdMs: 30_000,
    }).reply.ok,
    'other assets are separate',
  );
  t.true(
    w.send({ type: 'Reserve', orderId: 'o1', asset: 'collateral', amount: '60', market: 'm1', holdMs: 30_000 }).reply.ok,
    'the same order again: idempotent',
  );
  t.is(available(w.state, 'collateral', 1000), 40n);
});

test('release partial then whole, never twice; a newer balance read wins, an older one does not', (t) => {
  const w = runner();
  w.send({
    type: 'Reserve',
    orderId: 'o1',
    asset: 'collateral',
    amount: '60',
    market: 'm',
    balance: { amount: '100', slot: 5 },
    holdMs: 30_000,
  });
  w.send({ type: 'Confirm', orderId: 'o1' });
  t.deepEqual(w.send({ type: 'Release', orderId: 'o1', amount: '20', reason: 'fill' }).reply, { ok: true, released: '20' });
  t.is(available(w.state, 'collateral', 1000), 60n);
  t.deepEqual(w.send({ type: 'Release', orderId: 'o1', reason: 'cancel' }).reply, { ok: true, released: '40' });
  t.deepEqual(w.send({ type: 'Release', orderId: 'o1', reason: 'cancel' }).reply, { ok: true, released: '0' });
  w.send({ type: 'SeeBalance', asset: 'collateral', balance: { amount: '30', slot: 4 } });
  t.is(w.state.balances.collateral.amount, '100');
  w.send({ type: 'SeeBalance', asset: 'collateral', balance: { amount: '30', slot: 6 } });
  t.is(w.state.balances.collateral.amount, '30');
});

test('an unconfirmed hold lapses (a node died between reserving and placing); a confirmed one does not', (t) => {
  const w = runner();
  w.send(
    {
      type: 'Reserve',
      orderId: 'lost',
      asset: 'collateral',
      amount: '70',
      market: 'm',
      balance: { amount: '100', slot: 1 },
      holdMs: 10_000,
    },
    1000,
  );
  w.send({ type: 'Reserve', orderId: 'kept', asset: 'collateral', amount: '30', market: 'm', holdMs: 10_000 }, 1000);
  w.send({ type: 'Confirm', orderId: 'kept' }, 2000);
  t.is(available(w.state, 'collateral', 20_000), 70n);
  const d = w.send({ type: 'Reserve', orderId: 'new', asset: 'collateral', amount: '70', market: 'm', holdMs: 10_000 }, 20_000);
  t.true(d.reply.ok);
  t.deepEqual(
    d.events.map((e) => e.type),
    ['Released', 'Reserved'],
  );
  t.deepEqual(Object.keys(w.state.reservations).sort(), ['kept', 'new']);
});

// The same rules as given/when/then specifications (test/helpers/decider-spec.ts).
const wallet = deciderSpec(walletDecider, 'W');
const held = (orderId: string, amount: string, confirmed = true) =>
  ({ type: 'Reserved', orderId, reservation: { asset: 'collateral', amount, market: 'm', confirmed, lapsesAt: 31_000 } }) as WalletEvent;
const seen = { type: 'BalanceSeen', asset: 'collateral', amount: '100', slot: 5 } as WalletEvent;

test('given a balance and a hold, when another order asks for more than is free, then it is refused and nothing changes', (t) => {
  wallet
    .given(seen, held('o1', '60'))
    .when({ type: 'Reserve', orderId: 'o2', asset: 'collateral', amount: '50', market: 'm', holdMs: 30_000, at: 1000 })
    .then(t, {
      events: [],
      reply: { ok: false, code: 'INSUFFICIENT_BALANCE', available: '40', message: 'maker amount 50 exceeds the unreserved balance 40' },
    });
});

test('given a hold, when it is released in part, then the rest stays held', (t) => {
  wallet
    .given(seen, held('o1', '60'))
    .when({ type: 'Release', orderId: 'o1', amount: '20', reason: 'fill', at: 1000 })
    .then(t, { events: [{ type: 'Released', orderId: 'o1', amount: '20', reason: 'fill' }], reply: { ok: true, released: '20' } });
});

test('given an unconfirmed hold past its time, when any command comes, then the hold lapses first', (t) => {
  wallet
    .given(seen, held('lost', '70', false))
    .when({ type: 'SeeBalance', asset: 'collateral', balance: { amount: '100', slot: 6 }, at: 40_000 })
    .then(t, {
      events: [
        { type: 'Released', orderId: 'lost', amount: '70', reason: 'hold_lapsed' },
        { type: 'BalanceSeen', asset: 'collateral', amount: '100', slot: 6 },
      ],
      reply: { ok: true },
    });
});

test('given no balance on record, when an order reserves without one, then the wallet says it does not know (not insufficient)', (t) => {
  wallet
    .given()
    .when({ type: 'Reserve', orderId: 'o1', asset: 'collateral', amount: '1', market: 'm', holdMs: 30_000, at: 1000 })
    .then(t, {
      events: [],
      reply: { ok: false, code: 'BALANCE_UNKNOWN', available: '0', message: 'no balance of collateral on record for this wallet' },
    });
});

test('given a balance seen with its allowance, when an order reserves, then the reply says the allowance on record', (t) => {
  const withAllowance = { ...seen, slot: 7, delegate: 'D', delegatedAmount: '25' } as WalletEvent;
  wallet
    .given(withAllowance)
    .when({ type: 'Reserve', orderId: 'o1', asset: 'collateral', amount: '60', market: 'm', holdMs: 30_000, at: 1000 })
    .then(t, {
      reply: { ok: true, reserved: '60', available: '40', allowance: { delegate: 'D', amount: '25' } },
    });
  // A change seen later (an account notification at a newer slot) replaces amount and allowance.
  wallet
    .given(withAllowance)
    .when({
      type: 'SeeBalance',
      asset: 'collateral',
      balance: { amount: '10', slot: 8, delegate: null, delegatedAmount: '0' },
      at: 1000,
    })
    .then(t, {
      events: [{ type: 'BalanceSeen', asset: 'collateral', amount: '10', slot: 8, delegate: null, delegatedAmount: '0' }],
    });
});

test('a ReleaseOrders handed on by a book with its cancel answer frees the holds and answers that answer, once', (t) => {
  const w = runner();
  w.send({ type: 'SeeBalance', asset: 'collateral', balance: { amount: '100', slot: 1 } });
  w.send({ type: 'Reserve', orderId: 'a', asset: 'collateral', amount: '30', market: 'm', holdMs: 30_000 });
  const answer = { canceled: ['a'], not_canceled: { z: 'order not found' }, released: true };
  const d = w.send({ type: 'ReleaseOrders', orderIds: ['a'], reason: 'canceled', answer });
  t.deepEqual(d.reply, answer);
  t.deepEqual(d.events, [{ type: 'Released', orderId: 'a', amount: '30', reason: 'canceled' }]);
  t.is(available(w.state, 'collateral', 1000), 100n);
  // Seen again (the outbox relay's copy): nothing more to free, the same answer.
  const again = w.send({ type: 'ReleaseOrders', orderIds: ['a'], reason: 'canceled', answer });
  t.deepEqual(again.reply, answer);
  t.deepEqual(again.events, []);
});

test('given holds of cancelled orders, some partly released, when they are released as orders, then all they hold goes, once', (t) => {
  const w = runner();
  w.send({ type: 'SeeBalance', asset: 'collateral', balance: { amount: '100', slot: 1 } });
  for (const [id, amount] of [
    ['a', '30'],
    ['b', '20'],
    ['c', '10'],
  ])
    t.true(w.send({ type: 'Reserve', orderId: id, asset: 'collateral', amount, market: 'm', holdMs: 30_000 }).reply.ok);
  w.send({ type: 'Release', orderId: 'a', amount: '5', reason: 'filled' });
  const d = w.send({ type: 'ReleaseOrders', orderIds: ['a', 'b', 'a', 'unknown'], reason: 'canceled' });
  t.deepEqual(d.reply, { ok: true, released: '45' });
  t.deepEqual(d.events, [
    { type: 'Released', orderId: 'a', amount: '25', reason: 'canceled' },
    { type: 'Released', orderId: 'b', amount: '20', reason: 'canceled' },
  ]);
  t.is(available(w.state, 'collateral', 1000), 90n);
  // The books' own releases of the same orders, relayed later through the outbox, free nothing more.
  t.deepEqual(w.send({ type: 'Release', orderId: 'a', amount: '25', reason: 'canceled' }).reply, { ok: true, released: '0' });
  t.deepEqual(w.send({ type: 'Release', orderId: 'b', amount: '20', reason: 'canceled' }).reply, { ok: true, released: '0' });
  t.deepEqual(w.send({ type: 'ReleaseOrders', orderIds: ['a', 'b'], reason: 'canceled' }).reply, { ok: true, released: '0' });
  t.is(available(w.state, 'collateral', 1000), 90n);
});

test('PlaceOrder: holds for good and hands the book its command (with the allowance warning); what does not fit is answered here', (t) => {
  const w = runner();
  const book = { topic: 'book', key: 'm1', id: 'place:o1', cmd: { type: 'PlaceOrder', now: 1000 } };
  const place = (orderId: string, amount: string, extra: object = {}) =>
    w.send({
      type: 'PlaceOrder',
      orderId,
      asset: 'collateral',
      amount,
      market: 'm1',
      delegate: 'D',
      book: { ...book, id: `place:${orderId}` },
      ...extra,
    });
  const first = place('o1', '60', { balance: { amount: '100', slot: 5, delegate: 'D', delegatedAmount: '1000' } });
  t.like(first.reply, { ok: true, reserved: '60' });
  t.deepEqual(first.forward, { topic: 'book', key: 'm1', id: 'place:o1', cmd: { type: 'PlaceOrder', now: 1000, held: true } });
  t.deepEqual(
    w.state.reservations.o1,
    { asset: 'collateral', amount: '60', market: 'm1', confirmed: true, lapsesAt: 0 },
    'confirmed at once: it does not lapse',
  );
  t.is(available(w.state, 'collateral', 10_000_000), 40n, 'still held long after any hold would have lapsed');
  // Tried again (a retry under another key): the same hold, handed on again; the book answers it once.
  const again = place('o1', '60');
  t.deepEqual(again.events, []);
  t.deepEqual(again.forward?.id, 'place:o1');
  // Does not fit: answered by the wallet, nothing handed on.
  const short = place('o2', '50');
  t.like(short.reply, { ok: false, code: 'INSUFFICIENT_BALANCE', available: '40' });
  t.is(short.forward, undefined);
  // An allowance below the amount (or for another delegate) warns in the book's answer.
  w.send({ type: 'SeeBalance', asset: 'collateral', balance: { amount: '1000', slot: 6, delegate: 'D', delegatedAmount: '10' } });
  t.deepEqual(place('o3', '20').forward?.cmd, { type: 'PlaceOrder', now: 1000, held: true, warnings: ['allowance'] });
  // The book's refusal (HoldReturned → Release) frees it all.
  t.like(w.send({ type: 'Release', orderId: 'o3', reason: 'rejected' }).reply, { ok: true, released: '20' });
  // No balance on record: BALANCE_UNKNOWN, the front door reads the chain and asks again.
  t.like(w.send({ type: 'PlaceOrder', orderId: 'o4', asset: 'tokenX', amount: '1', market: 'm1', delegate: null, book }).reply, {
    ok: false,
    code: 'BALANCE_UNKNOWN',
  });
});

test('Grant: credit for a book short of it, what it had left back first, a chunk more as the balance allows; refused, it names the markets to recall from', (t) => {
  const w = runner();
  const grant = (market: string, need: string, returned = '0', more: object = {}) =>
    w.send({
      type: 'Grant',
      market,
      need,
      returned,
      delegate: 'D',
      book: { topic: 'books', key: market, id: `granted:${market}:${need}`, cmd: { type: 'PlaceOrder' } },
      ...more,
    });
  // Never seen: the sender reads the chain.
  t.like(grant('m1', '10').reply, { ok: false, code: 'BALANCE_UNKNOWN' });
  // 100 on record (allowance 50 to D): 10 needed, 30 more granted; the order goes back with it.
  const g1 = grant('m1', '10', '0', { balance: { amount: '100', slot: 1, delegate: 'D', delegatedAmount: '50' } });
  t.like(g1.forward, { topic: 'books', key: 'm1', id: 'granted:m1:10' });
  t.deepEqual((g1.forward!.cmd as any).granted, { amount: '40', allowance: { delegate: 'D', amount: '50' } });
  t.deepEqual(w.state.credit, { m1: '40' });
  t.is(available(w.state, 'collateral', 1000), 60n);
  // The chunk is bounded by what is free: 50 needed of 60, all 60 go.
  t.deepEqual((grant('m2', '50').forward!.cmd as any).granted, { amount: '60', allowance: { delegate: 'D', amount: '50' } });
  t.is(available(w.state, 'collateral', 1000), 0n);
  // m1 gives back 25 it does not use and needs 30: refused (25 free), naming m2 to recall from.
  const refused = grant('m1', '30', '25');
  t.like(refused.reply, { ok: false, code: 'INSUFFICIENT_BALANCE', available: '25', recall: ['m2'] });
  t.is(refused.forward, undefined);
  t.deepEqual(w.state.credit, { m1: '15', m2: '60' });
  // m2 gives back 60 (a recall, answered by the wallet); then it fits, from m1's view.
  t.deepEqual(w.send({ type: 'CreditBack', market: 'm2', amount: '60', answer: { ok: true, returned: '60' } }).reply, {
    ok: true,
    returned: '60',
  });
  t.deepEqual((grant('m1', '30').forward!.cmd as any).granted, { amount: '85', allowance: { delegate: 'D', amount: '50' } });
  // A fill spent 20 of m1's credit; giving back more than a market has is capped, never negative.
  w.send({ type: 'CreditSpent', market: 'm1', amount: '20' });
  t.deepEqual(w.state.credit, { m1: '80' });
  w.send({ type: 'CreditBack', market: 'm1', amount: '500' });
  t.deepEqual(w.state.credit, {});
  t.is(available(w.state, 'collateral', 1000), 100n);
  // A mint's Reserve refused while books hold credit names them too.
  grant('m3', '70');
  t.like(w.send({ type: 'Reserve', orderId: 'mint', asset: 'collateral', amount: '50', market: 'm9', holdMs: 1000 }).reply, {
    ok: false,
    recall: ['m3'],
  });
});
