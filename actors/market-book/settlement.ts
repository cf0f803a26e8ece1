// The settlement executor's news of a trade (MINED, CONFIRMED, RETRYING, FAILED) goes through the
// market's book so that it lands on the market's ledger in order, with the gap-free seq the book's
// partition assigns. The book itself does not change: which transitions are legal is the
// executor's business (one row per trade, src/settlement/), the book records what it is told.
import type { Decided } from './place.ts';
import type { BookState, UpdateTrade, UpdateTradeReply } from './types.ts';

const STATUSES = new Set(['MINED', 'CONFIRMED', 'RETRYING', 'FAILED']);

export function decideUpdateTrade(
  _s: BookState,
  cmd: UpdateTrade,
): Decided<UpdateTradeReply> | { events: []; reply: { error: 'INVALID_COMMAND'; message: string } } {
  if (typeof cmd.tradeId !== 'string' || !cmd.tradeId || !STATUSES.has(cmd.status)) {
    return {
      events: [],
      reply: { error: 'INVALID_COMMAND', message: 'UpdateTrade needs a tradeId and a status of MINED, CONFIRMED, RETRYING or FAILED' },
    };
  }
  return {
    events: [
      {
        type: 'TradeUpdated',
        at: cmd.now,
        tradeId: cmd.tradeId,
        status: cmd.status,
        transactionHash: cmd.transactionHash ?? '',
        attempt: cmd.attempt ?? 0,
        reason: cmd.reason ?? null,
      },
    ],
    reply: { ok: true, trade_id: cmd.tradeId, status: cmd.status },
  };
}
