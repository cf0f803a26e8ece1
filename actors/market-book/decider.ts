// The MarketBook actor (key = market condition id): a pure price-time-priority matching engine for
// one binary market (contracts/clob.md). decide validates and matches and returns ledger events and
// a reply; evolve applies an event in place (evolve.ts). No clock, no randomness: time comes in the
// commands, trade ids derive from the command's tradeId (or the order hash).
import type { Decider, Decision } from '../../src/runtime/types.ts';
import { decideConfigure } from './configure.ts';
import { evolveBook, initialBook } from './evolve.ts';
import { decidePlace, decideRelease } from './place.ts';
import { decideCancel, decideExpire, decideInvalidate, decideStartGame } from './removals.ts';
import { decideUpdateTrade } from './settlement.ts';
import type { BookCommand, BookEvent, BookReply, BookState } from './types.ts';

export const marketBookDecider: Decider<BookState, BookCommand, BookEvent, BookReply> = {
  initial: (key) => initialBook(key),

  decide(state, cmd): Decision<BookEvent, BookReply> {
    switch (cmd.type) {
      case 'PlaceOrder': return decidePlace(state, cmd);
      case 'CancelOrders': return decideCancel(state, cmd);
      case 'InvalidateOrders': return decideInvalidate(state, cmd);
      case 'Expire': return decideExpire(state, cmd.now);
      case 'StartGame': return decideStartGame(state, cmd.now);
      case 'ReleaseDelayed': return decideRelease(state, cmd.now);
      case 'ConfigureMarket': return decideConfigure(state, cmd);
      case 'UpdateTrade': return decideUpdateTrade(state, cmd);
      default: return { events: [], reply: { error: 'INVALID_COMMAND', message: `unknown command ${(cmd as { type?: unknown }).type}` } };
    }
  },

  /** Mutates `state` and returns it (the runtime owns the state). */
  evolve: evolveBook,
};
