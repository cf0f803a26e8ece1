// The order book's actor kinds as the runtime hosts them: one MarketBook per market on
// `clob.commands`, one Wallet per wallet on `wallet.commands`.
import {
  marketBookDecider,
  toSnapshot,
  fromSnapshot,
  ordersOf,
  getOrder,
  bestBidAsk,
  lastTrade,
  depthOf,
  changesBook,
  type Depth,
  type MarketBookEvent,
} from '../../actors/market-book/index.ts';
import { walletDecider, type WalletEvent, type WalletState } from '../../actors/wallet/decider.ts';
import { bookCommand, type BookCommandWire, type CancelReply, type BookLevels, type BookReplies } from '../../topics/clob-commands.ts';
import { walletCommand, type WalletCommand, type WalletReply } from '../../topics/wallet-commands.ts';
import { ledgerProjection } from '../store/projections/ledger.ts';
import type { ActorKind, Decider } from '../runtime/types.ts';

/** The book's state plus `bookSeq`: how many events changed its resting book (changesBook), kept in
 *  its snapshot, so that it only grows; the public book reads (/v1/book) show it as `seq`. */
type BookState = ReturnType<typeof marketBookDecider.initial> & { bookSeq?: number };

const levelsOut = (d: Depth | null): BookLevels | null =>
  d && { bids: d.bids.map(([p, n]) => [p, n.toString()]), asks: d.asks.map(([p, n]) => [p, n.toString()]) };

/** Any reply of the book (topics/clob-commands.ts, BookReplies). */
type AnyBookReply = BookReplies[keyof BookReplies];

/** The book's decider plus read commands answered from its state, with no events. */
const bookWithReads: Decider<BookState, BookCommandWire, MarketBookEvent, AnyBookReply> = {
  initial: (key) => marketBookDecider.initial(key),
  evolve(s, e) {
    const next: BookState = marketBookDecider.evolve(s, e);
    if (changesBook(e)) next.bookSeq = (next.bookSeq ?? 0) + 1;
    return next;
  },
  decide(s, c) {
    if (c.type === 'ReadOrders') {
      if (c.orderId) {
        const o = getOrder(s, c.orderId);
        return { events: [], reply: { orders: o && o.maker.toLowerCase() === c.owner.toLowerCase() ? [o] : [] }, final: false };
      }
      return { events: [], reply: { orders: ordersOf(s, c.owner, { assetId: c.assetId }) }, final: false };
    }
    if (c.type === 'ReadQuote') {
      const m = s.market;
      const quote = (asset: string | undefined) => (asset ? bestBidAsk(s, asset) : null);
      // `yesMintMerge`: the YES quote as a taker meets it with mint/merge matching on (a NO bid at q
      // is a YES ask at 1 − q, a NO ask a YES bid).
      const yesMintMerge = c.mintMerge && m?.yesTokenId ? bestBidAsk(s, m.yesTokenId, { mintMerge: true }) : undefined;
      return {
        events: [],
        reply: { yes: quote(m?.yesTokenId), no: quote(m?.noTokenId), last: lastTrade(s), ...(yesMintMerge ? { yesMintMerge } : {}) },
        final: false,
      };
    }
    if (c.type === 'ReadBook') {
      // Both outcome views of the one book (mirror images with mint/merge on), its seq and last trade.
      const m = s.market;
      return {
        events: [],
        final: false,
        reply: m
          ? {
              seq: s.bookSeq ?? 0,
              yes: levelsOut(depthOf(s, m.yesTokenId, { mintMerge: c.mintMerge })),
              no: levelsOut(depthOf(s, m.noTokenId, { mintMerge: c.mintMerge })),
              last: lastTrade(s),
            }
          : { seq: s.bookSeq ?? 0, yes: null, no: null, last: null },
      };
    }
    return marketBookDecider.decide(s, c);
  },
};

export function clobKinds(o: { bookTopic: string; walletTopic: string }): { kind: ActorKind; owns(key: string): boolean }[] {
  const book: ActorKind<BookState, BookCommandWire, MarketBookEvent, AnyBookReply> = {
    name: 'market-book',
    topic: o.bookTopic,
    decider: bookWithReads,
    parse: (c) => bookCommand.parse(c),
    toSnapshot: (s) => ({ ...toSnapshot(s), bookSeq: s.bookSeq ?? 0 }),
    fromSnapshot: (j) => Object.assign(fromSnapshot(j), { bookSeq: Number((j as { bookSeq?: number }).bookSeq ?? 0) }),
    project: ledgerProjection({ walletTopic: o.walletTopic }),
  };
  const wallet: ActorKind<WalletState, WalletCommand & { at: number }, WalletEvent, WalletReply | CancelReply> = {
    name: 'wallet',
    topic: o.walletTopic,
    decider: walletDecider,
    parse: (c, env) => ({ ...walletCommand.parse(c), at: env.at }),
    toSnapshot: (s) => s,
    fromSnapshot: (j) => j as WalletState,
    project: async () => undefined, // the wallet's state lives in its snapshot; nothing else reads it
  };
  return [
    { kind: book, owns: (key) => key.startsWith('0x') },
    { kind: wallet, owns: () => true },
  ];
}
