// The WebSocket channels' server messages (docs/ws.md): the `market` channel's `book`,
// `price_change`, `last_trade_price`, `tick_size_change` and `error`, the `user` channel's `auth`,
// `order` and `trade`, as zod schemas. The node's feed builds them (typed by these, src/clob/
// market-feed.ts) and the typed client reads them (src/client/subscriptions.ts). Fields are only
// ever added, never renamed.
import { z } from 'zod';

/** A decimal string of units ("0.41", "5"). */
const dec = z.string().regex(/^\d+(\.\d+)?$/);
const side = z.enum(['BUY', 'SELL']);
/** Milliseconds since the epoch, as a string. */
const ms = z.string().regex(/^\d+$/);
const level = z.object({ price: dec, size: dec });

export const bookMessage = z.object({
  event_type: z.literal('book'),
  market: z.string(),
  asset_id: z.string(),
  seq: z.number().int(),
  timestamp: ms,
  hash: z.string(),
  bids: z.array(level),
  asks: z.array(level),
  tick_size: dec,
  min_order_size: dec,
  /** The numbering `seq` belongs to: send it back with `last_seq` on a resume. */
  feed: z.string(),
});

export const priceChange = z.object({ asset_id: z.string(), price: dec, size: dec, side, best_bid: dec, best_ask: dec });

export const priceChangeMessage = z.object({
  event_type: z.literal('price_change'),
  market: z.string(),
  seq: z.number().int(),
  timestamp: ms,
  price_changes: z.array(priceChange),
});

export const lastTradePriceMessage = z.object({
  event_type: z.literal('last_trade_price'),
  market: z.string(),
  seq: z.number().int(),
  timestamp: ms,
  asset_id: z.string(),
  price: dec,
  size: dec,
  side,
  fee_rate_bps: z.string(),
});

export const tickSizeChangeMessage = z.object({
  event_type: z.literal('tick_size_change'),
  market: z.string(),
  seq: z.number().int(),
  timestamp: ms,
  asset_id: z.string(),
  old_tick_size: dec,
  new_tick_size: dec,
});

export const channelError = z.object({ event_type: z.literal('error'), message: z.string() });

export const marketMessage = z.discriminatedUnion('event_type', [
  bookMessage,
  priceChangeMessage,
  lastTradePriceMessage,
  tickSizeChangeMessage,
  channelError,
]);

export const userAuthMessage = z.object({ event_type: z.literal('auth'), wallet: z.string(), timestamp: ms });

export const userOrderMessage = z.object({
  event_type: z.literal('order'),
  type: z.enum(['PLACEMENT', 'UPDATE', 'CANCELLATION']),
  id: z.string(),
  market: z.string(),
  asset_id: z.string(),
  side,
  price: dec,
  original_size: dec,
  size_matched: dec,
  status: z.string(),
  reason: z.string().optional(),
  trade_id: z.string().optional(),
  seq: z.number().int(),
  timestamp: ms,
});

export const userMakerOrder = z.object({
  order_id: z.string(),
  owner: z.string(),
  matched_amount: dec,
  price: dec,
  asset_id: z.string(),
  outcome: z.string(),
  side,
});

export const userTradeMessage = z.object({
  event_type: z.literal('trade'),
  id: z.string(),
  market: z.string(),
  asset_id: z.string(),
  side,
  size: dec,
  price: dec,
  status: z.enum(['MATCHED', 'MINED', 'CONFIRMED', 'RETRYING', 'FAILED']),
  maker_orders: z.array(userMakerOrder),
  trader_side: z.enum(['TAKER', 'MAKER']),
  transaction_hash: z.string().optional(),
  seq: z.number().int(),
  timestamp: ms,
});

export const userMessage = z.discriminatedUnion('event_type', [userAuthMessage, userOrderMessage, userTradeMessage, channelError]);

export type BookMessage = z.infer<typeof bookMessage>;
export type PriceChange = z.infer<typeof priceChange>;
export type PriceChangeMessage = z.infer<typeof priceChangeMessage>;
export type LastTradePriceMessage = z.infer<typeof lastTradePriceMessage>;
export type TickSizeChangeMessage = z.infer<typeof tickSizeChangeMessage>;
export type ChannelError = z.infer<typeof channelError>;
export type MarketMessage = z.infer<typeof marketMessage>;
export type UserOrderMessage = z.infer<typeof userOrderMessage>;
export type UserTradeMessage = z.infer<typeof userTradeMessage>;
export type UserMessage = z.infer<typeof userMessage>;
