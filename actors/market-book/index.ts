// The MarketBook actor: a pure matching engine for one binary market (see decider.ts).
import type { BookCommand, BookEvent, BookReply, BookState } from './types.ts';

export { marketBookDecider, RELEASE_FORWARD_MAX } from './decider.ts';
export { initialBook, evolveBook } from './evolve.ts';
export { FINISHED_CAP } from './finished.ts';
export { BALANCES_MAX } from './tokens.ts';
export { toSnapshot, fromSnapshot, cloneBook, type BookSnapshot } from './snapshot.ts';
export {
  ordersOf,
  getOrder,
  bestBidAsk,
  lastTrade,
  depthOf,
  changesBook,
  type OrderView,
  type Quote,
  type Depth,
  type DepthLevel,
} from './reads.ts';
export { reservationOf, remainingReservationOf, reservedFor, releaseOf, takerFee, ONE } from './amounts.ts';
export { parseMarket } from './configure.ts';
export { checkBook } from './invariants.ts';
export type * from './types.ts';
export type MarketBookState = BookState;
export type MarketBookCommand = BookCommand;
export type MarketBookEvent = BookEvent;
export type MarketBookReply = BookReply;
