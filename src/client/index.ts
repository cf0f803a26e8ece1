// The service's typed client: `ClobClient` (order book, wallet sign-in) and `ParlayClient`
// (parlays and the market catalog, Platform JWT). Response types are the zod schemas that
// /openapi.json documents (src/api/: the HTTP contract the routes validate with).
export { ClobClient, type ClobClientOptions, type TradeParams, type StreamOptions, type OrderBookSummary } from './clob.ts';
export {
  ParlayClient,
  type ParlayClientOptions,
  type ParlayStatus,
  type VaultPatch,
  type MarketCreate,
  type MarketPatch,
  type TemplateCreate,
  type TemplatePatch,
  type QuoteRequest,
  type Template,
  type Suggestion,
  type Quote,
} from './parlay.ts';
export { ApiError, UnavailableError, Transport, type TransportOptions, type ResponseInfo } from './http.ts';
export {
  buildOrder,
  orderIdOf,
  orderHash,
  addressOf,
  micro,
  decimal,
  ANY_TAKER,
  type OrderInput,
  type Side,
  type OrderType,
  type SignedOrder,
  type WalletKey,
} from './orders.ts';
export {
  MarketSubscription,
  UserSubscription,
  type MarketHandlers,
  type UserHandlers,
  type MarketSubscriptionStats,
} from './subscriptions.ts';
export { Channel, type ChannelOptions, type ChannelStats } from './channel.ts';
export { LocalBook, type LocalBookView, type Level } from './local-book.ts';
export type * from '../../topics/market-channel.ts';
export { parseSse, type SseEvent, type LedgerEvent } from './stream.ts';
export type * from '../api/schemas.ts';
