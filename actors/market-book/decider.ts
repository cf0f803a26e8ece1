// The MarketBook actor (key = market condition id): a pure price-time-priority matching engine for
// one binary market (contracts/clob.md). decide validates and matches and returns ledger events and
// a reply; evolve applies an event in place (evolve.ts). No clock, no randomness: time comes in the
// commands, trade ids derive from the command's tradeId (or the order hash).
import type { Decider, Decision } from '../../src/runtime/types.ts';
import { decideConfigure } from './configure.ts';
import { evolveBook, initialBook } from './evolve.ts';
import { decidePlace, decideRelease, ledgerFirst } from './place.ts';
import { decideCancel, decideExpire, decideInvalidate, decideStartGame } from './removals.ts';
import { decideUpdateTrade } from './settlement.ts';
import { decideReleaseTokens, decideReserveTokens, decideSeeBalance } from './tokens.ts';
import { askForCredit, decideReturnCredit } from './credit.ts';
import type { BookCommand, BookEvent, BookReply, BookState } from './types.ts';
import type { BookReplies } from '../../topics/clob-commands.ts';

/** What the topic promises each command type answers (topics/clob-commands.ts, BookReplies). */
type Answer<T extends BookCommand['type']> = Decision<BookEvent, BookReplies[T]>;

/**
 * An order its wallet already holds for (wallet PlaceOrder, `held`): refused, its hold goes back
 * (HoldReturned; not for a duplicate, whose hold is the first order's); taken, the wallet's warnings
 * come first in the answer.
 */
function placeHeld(d: Answer<'PlaceOrder'>, cmd: Extract<BookCommand, { type: 'PlaceOrder' }>): Answer<'PlaceOrder'> {
  if (!cmd.held) return d;
  const r = d.reply;
  if ('error' in r) {
    if (r.error === 'DUPLICATE_ORDER') return d;
    const back: BookEvent = { type: 'HoldReturned', at: cmd.now, orderId: cmd.order.hash, owner: cmd.order.maker, reason: r.error };
    return { ...d, events: [...d.events, back] };
  }
  return cmd.warnings?.length ? { ...d, reply: { ...r, warnings: [...cmd.warnings, ...(r.warnings ?? [])] } } : d;
}

/**
 * A duplicate that changed nothing is not remembered as answered: its idempotency key is the first
 * order's (`place:<order>`), whose answer the inbox keeps, and a commit remembering a second answer
 * under it would be refused whole (InboxSeen) and the partition rebuilt. A POST of an order placed
 * before reaches the book since the front door no longer reads the ledger first (`ledgerChecked`).
 */
function notRemembered(d: Answer<'PlaceOrder'>): Answer<'PlaceOrder'> {
  return 'error' in d.reply && d.reply.error === 'DUPLICATE_ORDER' && !d.events.length && !d.forward ? { ...d, final: false } : d;
}

/** Most order ids a cancel hands on to its wallet with its answer (a bigger cancel is answered by the book). */
export const RELEASE_FORWARD_MAX = 2_000;

/**
 * A cancel that names its wallets' topic (`releaseTo`) and cancelled something: the freeing of the
 * holds is handed on to the owner's wallet with the answer, which the wallet gives once they are free
 * (the cancelled orders' events say so, and the ledger sends no Release of their own).
 */
function cancelThroughWallet(d: Answer<'CancelOrders'>, cmd: Extract<BookCommand, { type: 'CancelOrders' }>): Answer<'CancelOrders'> {
  const r = d.reply;
  if (!cmd.releaseTo || !r.canceled.length || r.canceled.length + Object.keys(r.not_canceled).length > RELEASE_FORWARD_MAX) return d;
  // Orders whose tokens this book held (a SELL's, tokens.ts) are free with the cancel itself.
  const walletHeld: string[] = [];
  for (const e of d.events) if (e.type === 'OrderCancelled' && !e.release.inBook) walletHeld.push(e.orderId);
  if (!walletHeld.length) return { ...d, reply: { ...r, released: true } };
  return {
    events: d.events.map((e) => (e.type === 'OrderCancelled' && !e.release.inBook ? { ...e, walletReleased: true } : e)),
    reply: r,
    forward: {
      topic: cmd.releaseTo,
      key: cmd.owner,
      id: `cancel-release:${walletHeld[0]}`,
      cmd: { type: 'ReleaseOrders', orderIds: walletHeld, reason: 'canceled', answer: { ...r, released: true } },
    },
  };
}

export const marketBookDecider: Decider<BookState, BookCommand, BookEvent, BookReply> = {
  initial: (key) => initialBook(key),

  decide(state, cmd): Decision<BookEvent, BookReply> {
    switch (cmd.type) {
      case 'PlaceOrder':
        return (ledgerFirst(state, cmd) ??
          askForCredit(state, cmd) ??
          notRemembered(placeHeld(decidePlace(state, cmd), cmd))) satisfies Answer<'PlaceOrder'>;
      case 'ReturnCredit':
        return decideReturnCredit(state, cmd) satisfies Answer<'ReturnCredit'>;
      case 'CancelOrders':
        return cancelThroughWallet(decideCancel(state, cmd), cmd) satisfies Answer<'CancelOrders'>;
      case 'InvalidateOrders':
        return decideInvalidate(state, cmd) satisfies Answer<'InvalidateOrders'>;
      case 'Expire':
        return decideExpire(state, cmd.now) satisfies Answer<'Expire'>;
      case 'StartGame':
        return decideStartGame(state, cmd.now) satisfies Answer<'StartGame'>;
      case 'ReleaseDelayed':
        return decideRelease(state, cmd.now) satisfies Answer<'ReleaseDelayed'>;
      case 'ConfigureMarket':
        return decideConfigure(state, cmd) satisfies Answer<'ConfigureMarket'>;
      case 'UpdateTrade':
        return decideUpdateTrade(state, cmd) satisfies Answer<'UpdateTrade'>;
      case 'SeeBalance':
        return decideSeeBalance(state, cmd) satisfies Answer<'SeeBalance'>;
      case 'ReserveTokens':
        return decideReserveTokens(state, cmd) satisfies Answer<'ReserveTokens'>;
      case 'ReleaseTokens':
        return decideReleaseTokens(state, cmd) satisfies Answer<'ReleaseTokens'>;
      default:
        return { events: [], reply: { error: 'INVALID_COMMAND', message: `unknown command ${(cmd as { type?: unknown }).type}` } };
    }
  },

  /** Mutates `state` and returns it (the runtime owns the state). */
  evolve: evolveBook,
};
