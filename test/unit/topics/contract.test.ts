// topics/ is the one contract between senders and receivers: every command a sender writes (the
// topic's `...Protocol['cmd']`) goes through the envelope, the bus's JSON and the topic's schema
// (the kind's `parse`, as the runtime hosts it) to the actor's decider, and what comes back is the
// reply the topic promises for that command type (`Answer<Protocol, C>`). Pure: no bus, no store.
import test from 'ava';
import type { z } from 'zod';
import { clobKinds } from '../../../src/clob/kinds.ts';
import { parlayKinds } from '../../../src/parlay/kinds.ts';
import type { Answer, Protocol } from '../../../src/runtime/asker.ts';
import { envelope, envelopeJson, replyTopicOf } from '../../../src/runtime/envelope.ts';
import { toJson, type Json } from '../../../src/runtime/json.ts';
import type { ActorKind, Envelope } from '../../../src/runtime/types.ts';
import type { MarketBookCommand } from '../../../actors/market-book/index.ts';
import {
  bookCommand,
  type BookProtocol,
  type BookCommand,
  type BookView,
  type CancelReply,
  type PlaceReply,
  type QuoteReply,
} from '../../../topics/clob-commands.ts';
import type { WalletProtocol, WalletReply } from '../../../topics/wallet-commands.ts';
import { VAULT_KEY, type ParlayEventsProtocol, type ParlayReply, type VaultReply } from '../../../topics/parlay-events.ts';

// ---- type-level: the actors' commands are the topics' schemas, the replies the topics' types ----

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const same = <T extends true>() => true as T;
same<Equal<MarketBookCommand, BookCommand>>();
same<Equal<BookCommand, Exclude<z.output<typeof bookCommand>, { type: 'ReadOrders' | 'ReadQuote' | 'ReadBook' }>>>();
same<Equal<Answer<BookProtocol, { type: 'PlaceOrder' }>, Json<PlaceReply>>>();
same<Equal<Answer<BookProtocol, { type: 'CancelOrders' }>, Json<CancelReply>>>();
same<Equal<Answer<BookProtocol, { type: 'ReadQuote' }>, Json<QuoteReply>>>();
same<Equal<Answer<BookProtocol, { type: 'ReadBook' }>, Json<BookView>>>();
same<Equal<Answer<WalletProtocol, { type: 'Reserve' }>, WalletReply>>();
same<Equal<Answer<ParlayEventsProtocol, { type: 'ParlayCreated' }>, ParlayReply>>();
same<Equal<Answer<ParlayEventsProtocol, { type: 'VaultSynced' }>, VaultReply>>();
same<
  Equal<Json<{ a: bigint; b: [number, bigint][]; c: { d: bigint | null } }>, { a: string; b: [number, string][]; c: { d: string | null } }>
>();

// ---- the path a command takes, without the bus --------------------------------------------

/** One actor as the runtime hosts it: the command is enveloped, sent as JSON, parsed by the kind,
 *  decided and evolved; the reply comes back as JSON, typed by the command. */
function host<P extends Protocol>(kind: ActorKind, key: string) {
  let state = kind.decider.initial(key);
  return <const C extends P['cmd']>(cmd: C, at = 1_000): Answer<P, C> => {
    const wire = JSON.parse(envelopeJson(cmd, { id: `t:${at}`, at })) as Envelope;
    const d = kind.decider.decide(state, kind.parse(wire.cmd, wire));
    for (const e of d.events) state = kind.decider.evolve(state, e);
    return JSON.parse(toJson(d.reply)) as Answer<P, C>;
  };
}

const MKT = '0x' + 'ab'.repeat(32);
const YES = 'YesMint1111111111111111111111111111111111111';
const NO = 'NoMint22222222222222222222222222222222222222';
const H1 = '0x' + '01'.repeat(32);
const H2 = '0x' + '02'.repeat(32);
const kindOf = (kinds: { kind: ActorKind }[], name: string) => kinds.find((k) => k.kind.name === name)!.kind;
const clob = clobKinds({ bookTopic: 'clob.commands', walletTopic: 'wallet.commands' });

test('every MarketBook command a sender writes parses with the topic schema and gets its reply', (t) => {
  const ask = host<BookProtocol>(kindOf(clob, 'market-book'), MKT);
  const configured = ask({
    type: 'ConfigureMarket',
    now: 0,
    market: { condition_id: MKT, yes_token_id: YES, no_token_id: NO, tick_size: '0.01', min_size: '1' },
  });
  t.true('ok' in configured && configured.ok);
  if ('ok' in configured) {
    t.is(configured.market.conditionId, MKT);
    t.is(configured.market.minSize, '1000000');
  }

  const order = (hash: string, size: string | number | bigint) => ({
    hash,
    maker: 'W',
    tokenId: YES,
    side: 'BUY' as const,
    price: 400_000,
    size,
    feeRateBps: 0,
    expiration: 0,
    orderType: 'GTC' as const,
    createdAt: 1_000,
  });
  // Sizes travel as decimal strings, numbers or bigint: the schema makes them bigint for the decider.
  const placed = ask({ type: 'PlaceOrder', now: 1_000, mintMerge: true, distortionBound: 1_000_000, order: order(H1, '10000000') });
  t.false('error' in placed);
  if (!('error' in placed)) {
    t.is(placed.status, 'live');
    t.is(placed.orderID, H1);
    t.is(placed.remaining, '10000000');
    t.is(placed.makingAmount, '0');
  }
  const placed2 = ask({ type: 'PlaceOrder', now: 1_000, mintMerge: true, distortionBound: 1_000_000, order: order(H2, 5_000_000n) });
  t.false('error' in placed2);

  const mine = ask({ type: 'ReadOrders', owner: 'w' });
  t.deepEqual(
    mine.orders.map((o) => [o.orderHash, o.originalSize, o.status]),
    [
      [H1, '10000000', 'LIVE'],
      [H2, '5000000', 'LIVE'],
    ],
  );
  const quote = ask({ type: 'ReadQuote', mintMerge: true });
  t.deepEqual(quote.yes?.bid, { price: 400_000, size: '15000000' });
  t.deepEqual(quote.yesMintMerge?.bid, { price: 400_000, size: '15000000' });
  const view = ask({ type: 'ReadBook', mintMerge: true });
  t.deepEqual(view.yes?.bids, [[400_000, '15000000']]);
  t.is(view.seq, 3); // the market's configuration and the two orders

  const cancelled = ask({ type: 'CancelOrders', owner: 'W', orderIds: [H2, '0xnone'], now: 2_000 });
  t.deepEqual(cancelled.canceled, [H2]);
  t.deepEqual(cancelled.not_canceled, { '0xnone': 'order not found' });
  const invalidated = ask({ type: 'InvalidateOrders', orderIds: [H1], reason: 'trade failed', tradeId: 't-x', now: 3_000 });
  t.deepEqual(invalidated, { invalidated: [H1], not_found: [] });
  t.deepEqual(ask({ type: 'Expire', now: 4_000 }).ejected, []);
  t.deepEqual(ask({ type: 'StartGame', now: 4_000 }).ejected, []);
  t.deepEqual(ask({ type: 'ReleaseDelayed', now: 4_000 }).released, []);
  const updated = ask({ type: 'UpdateTrade', tradeId: 't-x', status: 'MINED', now: 5_000, transactionHash: 'sig' });
  t.deepEqual(updated, { ok: true, trade_id: 't-x', status: 'MINED' });
});

test('a MarketBook command outside the topic schema is refused before the decider', (t) => {
  const kind = kindOf(clob, 'market-book');
  const env = envelope({}, { at: 0 });
  t.throws(() =>
    kind.parse(
      {
        type: 'PlaceOrder',
        now: 1,
        mintMerge: true,
        distortionBound: 0,
        order: {
          hash: H1,
          maker: 'W',
          tokenId: YES,
          side: 'BUY',
          price: 1,
          size: '-1',
          feeRateBps: 0,
          expiration: 0,
          orderType: 'GTC',
          createdAt: 1,
        },
      },
      env,
    ),
  );
  t.throws(() => kind.parse({ type: 'Sell', now: 1 }, env));
  t.throws(() => kind.parse({ type: 'UpdateTrade', tradeId: 't', status: 'DONE', now: 1 }, env));
});

test('every Wallet command parses with the topic schema and gets the wallet reply', (t) => {
  const ask = host<WalletProtocol>(kindOf(clob, 'wallet'), 'W');
  t.deepEqual(ask({ type: 'SeeBalance', asset: 'collateral', balance: { amount: '100', slot: 1 } }), { ok: true });
  t.deepEqual(ask({ type: 'Reserve', orderId: 'o1', asset: 'collateral', amount: '60', market: MKT, holdMs: 1_000 }), {
    ok: true,
    reserved: '60',
    available: '40',
  });
  const refused = ask({ type: 'Reserve', orderId: 'o2', asset: 'collateral', amount: '50', market: MKT, holdMs: 1_000 });
  t.false(refused.ok);
  if (!refused.ok) {
    t.is(refused.code, 'INSUFFICIENT_BALANCE');
    t.is(refused.available, '40');
  }
  t.deepEqual(ask({ type: 'Confirm', orderId: 'o1' }), { ok: true });
  t.deepEqual(ask({ type: 'Release', orderId: 'o1', amount: '10', reason: 'filled' }), { ok: true, released: '10' });
  // The envelope's time is the wallet's clock: a hold not confirmed lapses at it.
  t.deepEqual(ask({ type: 'Reserve', orderId: 'o3', asset: 'collateral', amount: '50', market: MKT, holdMs: 1_000 }, 2_000), {
    ok: true,
    reserved: '50',
    available: '0',
  });
  t.deepEqual(ask({ type: 'SeeBalance', asset: 'collateral', balance: { amount: '100', slot: 2 } }, 3_001), { ok: true });
  t.deepEqual(ask({ type: 'Reserve', orderId: 'o4', asset: 'collateral', amount: '50', market: MKT, holdMs: 1_000 }, 3_002), {
    ok: true,
    reserved: '50',
    available: '0',
  });
  t.deepEqual(ask({ type: 'ReleaseOrders', orderIds: ['o3', 'o4'], reason: 'canceled' }, 3_003), { ok: true, released: '50' });
  t.throws(() => kindOf(clob, 'wallet').parse({ type: 'ReleaseOrders', orderIds: [], reason: 'canceled' }, envelope({}, { at: 0 })));
});

test('every Parlay and Vault command parses with the topic schema and gets its reply', (t) => {
  const kinds = parlayKinds('parlay.events');
  const parlay = host<ParlayEventsProtocol>(kindOf(kinds, 'parlay'), '7');
  const created = parlay({
    type: 'ParlayCreated',
    eventId: 's1:0',
    pos: [10, 0, 0],
    signature: 's1',
    parlayId: '7',
    user: 'U',
    stake: '10',
    combinedProbability: '250000',
    potentialPayout: '40',
    createdAt: 1,
    legs: [
      { marketId: '1', market: 'M1', outcome: 0, probability: 500_000 },
      { marketId: '2', market: 'M2', outcome: 1, probability: 500_000 },
    ],
  });
  t.deepEqual(created, { result: 'applied' });
  const settled = parlay({
    type: 'LegSettled',
    eventId: 's11:0',
    pos: [11, 0, 0],
    signature: 's11',
    parlayId: '7',
    legIndex: 0,
    marketId: '1',
    legStatus: 1,
    parlayStatus: 0,
    legsWon: 1,
    legsLost: 0,
    legsResolved: 1,
    actualPayout: '0',
    settledAt: 2,
  });
  t.is(settled.result, 'applied');
  t.is(
    parlay({ type: 'ParlayVoided', eventId: 's12:0', pos: [12, 0, 0], signature: 's12', parlayId: '7', refund: '10', voidedAt: 3 }).result,
    'applied',
  );
  t.is(
    parlay({
      type: 'ParlayClaimed',
      eventId: 's13:0',
      pos: [13, 0, 0],
      signature: 's13',
      parlayId: '7',
      user: 'U',
      amount: '10',
      claimedAt: 4,
    }).result,
    'applied',
  );

  const vault = host<ParlayEventsProtocol>(kindOf(kinds, 'vault'), VAULT_KEY);
  t.deepEqual(vault({ type: 'VaultSynced', balance: '500', slot: 9 }), { result: 'applied' });
  t.deepEqual(vault({ type: 'VaultSynced', balance: '400', slot: 8 }), { result: 'stale' });
  t.deepEqual(vault({ type: 'VaultPatch', fields: { isActive: false } }), { result: 'applied' });
  t.deepEqual(vault({ type: 'VaultObserved', values: { totalStaked: { v: '10', pos: [10, 0, 0] } } }), { result: 'applied' });
  // A value the store cannot hold is refused by the schema (dead-lettered by the runtime).
  t.throws(() => kindOf(kinds, 'vault').parse({ type: 'VaultSynced', balance: '9223372036854775808', slot: 1 }, envelope({}, { at: 0 })));
});

test('envelopes have one shape and one author; the reply topic one name', (t) => {
  t.is(
    envelopeJson({ type: 'Confirm', orderId: 'o' }, { id: 'confirm:o', at: 5 }),
    '{"v":1,"id":"confirm:o","at":5,"cmd":{"type":"Confirm","orderId":"o"}}',
  );
  // No idempotency key: the field is left out, as before.
  t.is(envelopeJson({ type: 'Expire', now: 1 }, { at: 5 }), '{"v":1,"at":5,"cmd":{"type":"Expire","now":1}}');
  t.is(envelopeJson({ amount: 10n }, { at: 1 }), '{"v":1,"at":1,"cmd":{"amount":"10"}}');
  t.is(replyTopicOf('dev-node/1 a'), 'replies.dev-node_1_a');
});
