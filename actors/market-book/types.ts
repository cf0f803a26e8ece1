// The MarketBook vocabulary: events and the in-memory state (commands, replies and the market
// config are the topic's: topics/clob-commands.ts).
// Amounts (sizes, collateral, fees) are bigint micro-units; prices are integer micro-units of
// collateral per 1 unit of token (0 < price < 1_000_000); times are ms since the epoch except
// `expiration`, which is unix seconds as in the signed order.

import type { LetGo } from './let-go.ts';
import type { LastTrade, Market, OrderType, SettlementStatus, Side } from '../../topics/clob-commands.ts';

// The commands and their replies are the topic's (topics/clob-commands.ts): the book decides what the wire carries.
export type {
  BookCommand,
  BookReply,
  CancelOrders,
  CancelReason,
  CancelReply,
  ConfigureMarket,
  ConfigureReply,
  EjectReply,
  Expire,
  InvalidateOrders,
  InvalidateReply,
  LastTrade,
  Market,
  MarketInput,
  MarketStatus,
  OrderInput,
  OrderType,
  PlaceAccepted,
  PlaceOrder,
  PlaceReply,
  RejectCode,
  Rejection,
  ReleaseDelayed,
  ReleaseReply,
  SettlementStatus,
  Side,
  StartGame,
  UpdateTrade,
  UpdateTradeReply,
  SeeBalance,
  ReturnCredit,
  ReserveTokens,
  ReleaseTokens,
  TokensReply,
  BalanceInput,
} from '../../topics/clob-commands.ts';

export type Outcome = 'YES' | 'NO';
export type MatchType = 'COMPLEMENTARY' | 'MINT' | 'MERGE';

export const MICRO = 1_000_000;

// ---- events ----------------------------------------------------------------------------------

/** Reservation an order holds: BUY holds collateral, SELL holds its tokens. */
export interface Reservation {
  asset: 'collateral' | string;
  amount: bigint;
}
/** Reservation freed by an event (fill, cancel, ejection, invalidation). */
export interface Release {
  owner: string;
  asset: 'collateral' | string;
  amount: bigint;
  /** The hold is the book's own (a SELL's tokens, OrderData.inBook): nothing goes to the wallet. */
  inBook?: true;
}

/** An outcome token account of a wallet as the book last saw it (newest slot wins). */
export interface TokenBalance {
  amount: bigint;
  slot: number;
  delegate?: string | null;
  delegatedAmount?: bigint;
}

/** Collateral a wallet granted this book for its BUYs, and the standing allowance it last said. */
export interface Credit {
  amount: bigint;
  allowance?: { delegate: string | null; amount: bigint };
}

/** Tokens held for a conversion (ReserveTokens) until released, or until `lapsesAt`. */
export interface TokenReserve {
  owner: string;
  holds: { asset: string; amount: bigint }[];
  lapsesAt: number;
}

/** A plain copy of an order (no links): what events carry and snapshots store. */
export interface OrderData {
  hash: string;
  owner: string;
  tokenId: string;
  outcome: Outcome;
  side: Side;
  price: number;
  size: bigint;
  sizeMatched: bigint;
  remaining: bigint;
  feeRateBps: number;
  expiration: number;
  orderType: OrderType;
  createdAt: number;
  seq: number;
  /** The order was held (status delayed) before it reached the book. */
  delayed: boolean;
  /** Its tokens are held by this book (a SELL placed with `holdTokens`), not by its wallet. */
  inBook?: true;
}

export interface MakerFill {
  order_id: string;
  owner: string;
  maker_address: string;
  matched_amount: bigint;
  /** The maker's own price in its own asset. */
  price: number;
  fee_rate_bps: number;
  asset_id: string;
  outcome: Outcome;
  side: Side;
}

export interface TradeSummary {
  id: string;
  taker_order_id: string;
  market: string;
  asset_id: string;
  side: Side;
  /** Tokens of the taker's asset matched in this trade. */
  size: bigint;
  /** Price of the last (worst) fill, in the taker's asset. */
  price: number;
  /** Collateral value of the fills in the taker's asset: floor(Σ price × matched / 1e6). */
  notional: bigint;
  fee_rate_bps: number;
  /** Taker fee in collateral micro-units: floor(rate × Σ min(p, 1−p) × matched / 1e10). */
  fee: bigint;
  status: 'MATCHED';
  match_type: MatchType;
  /** ms */
  match_time: number;
  last_update: number;
  owner: string;
  maker_address: string;
  trader_side: 'TAKER';
  transaction_hash: string;
  outcome: Outcome;
  maker_orders: MakerFill[];
}

/** The fields every event that takes an order off the book (or out of the hold) carries. */
export interface OrderGone {
  at: number;
  orderId: string;
  owner: string;
  assetId: string;
  side: Side;
  price: number;
  sizeMatched: bigint;
  remaining: bigint;
  /** The order was still held (delayed), not on the book. */
  held: boolean;
  release: Release;
}

export type BookEvent =
  | { type: 'MarketConfigured'; at: number; market: Market }
  | {
      type: 'OrderPlaced';
      at: number;
      order: OrderData;
      /** LIVE: rests with `remaining` (even where the book then rests crossed: against the taker's own
       *  orders, or prices beyond the distortion bound); MATCHED: filled on arrival, never rests. */
      status: 'LIVE' | 'MATCHED';
      reservation: Reservation;
      /** Reservation consumed by the fills at arrival. */
      release: Release;
      tradeIds: string[];
      /** Its wallet holds for it for good (PlaceOrder `held`): nothing to confirm. */
      held?: boolean;
    }
  | {
      type: 'OrderDelayed';
      at: number;
      order: OrderData;
      releaseAt: number;
      mintMerge: boolean;
      distortionBound: number;
      /** the PlaceOrder's cap, null (or absent, events from before it) when none */
      maxMakersPerTrade?: number | null;
      /** the PlaceOrder's MINT/MERGE cap; absent (events from before it): maxMakersPerTrade */
      maxMakersPerMintMergeTrade?: number | null;
      tradeId: string | null;
      reservation: Reservation;
      /** Its wallet holds for it for good (PlaceOrder `held`): nothing to confirm. */
      held?: boolean;
    }
  | {
      type: 'OrderUpdated';
      at: number;
      orderId: string;
      owner: string;
      assetId: string;
      side: Side;
      price: number;
      /** Matched by this trade. */
      matched: bigint;
      sizeMatched: bigint;
      remaining: bigint;
      status: 'LIVE' | 'MATCHED';
      tradeId: string;
      release: Release;
    }
  | { type: 'TradeMatched'; at: number; trade: TradeSummary }
  /** A wallet's outcome token account as read or notified (SeeBalance, or brought by an order). */
  | ({ type: 'BalanceSeen'; at: number; owner: string; asset: string } & TokenBalance)
  /** Tokens held for a conversion (ReserveTokens); released by TokensReleased, or lapsing at `lapsesAt`. */
  | ({ type: 'TokensReserved'; at: number; id: string } & TokenReserve)
  | { type: 'TokensReleased'; at: number; id: string }
  /** Collateral the owner's wallet granted this book (handed back with a BUY: PlaceOrder `granted`). */
  | { type: 'CreditGranted'; at: number; owner: string; amount: bigint; allowance?: { delegate: string | null; amount: bigint } }
  /** Credit no order used, given back to the owner's wallet (with a Grant, or a CreditBack). */
  | { type: 'CreditReturned'; at: number; owner: string; amount: bigint }
  /** An order its wallet held for (PlaceOrder `held`) was refused: its hold goes back (no change to the book). */
  | { type: 'HoldReturned'; at: number; orderId: string; owner: string; reason: string }
  /** The settlement executor's news of a trade (no change to the book). */
  | {
      type: 'TradeUpdated';
      at: number;
      tradeId: string;
      status: SettlementStatus;
      transactionHash: string;
      attempt: number;
      reason: string | null;
    }
  /** reason: 'user', 'heartbeat_timeout' (CancelOrders.reason); 'would_cross' only in ledgers from
   *  before a remainder always rested (the decider no longer produces it). */
  /** walletReleased: its wallet's hold is freed by the cancel's own ReleaseOrders (CancelOrders.releaseTo), not by a Release of its own. */
  | (OrderGone & { type: 'OrderCancelled'; reason: string; walletReleased?: true })
  /** release_rejected: a delayed order that failed a check when released (`code` says which). */
  | (OrderGone & { type: 'OrderEjected'; reason: 'expired' | 'game_start' | 'release_rejected'; code?: string })
  | (OrderGone & { type: 'OrderInvalidated'; reason: string; tradeId: string });

// ---- state -----------------------------------------------------------------------------------

export const BUY = 0;
export const SELL = 1;
export const YES = 0;
export const NO = 1;

/** A live order: its ledger data plus the book's bookkeeping. */
export interface BookOrder extends OrderData {
  /** owner.toLowerCase(): self-trade and ownership checks are case-insensitive. */
  ownerKey: string;
  /** asset index: YES = 0, NO = 1 */
  a: number;
  /** side index: BUY = 0, SELL = 1 */
  s: number;
  /** When it entered the book (ms); StartGame ejects what entered before the start. */
  bookedAt: number;
  /** In a ladder queue. A queue entry whose order is no longer booked is dead and skipped. */
  booked: boolean;
}

/** One price level: a FIFO queue (array + head index); dead entries are skipped, then compacted. */
export interface Level {
  q: BookOrder[];
  head: number;
  live: number;
}

export interface HeldOrder {
  order: OrderData;
  releaseAt: number;
  mintMerge: boolean;
  distortionBound: number;
  /** null: no cap */
  maxMakersPerTrade: number | null;
  /** of the MINT/MERGE trade; null: no cap */
  maxMakersPerMintMergeTrade: number | null;
  tradeId: string | null;
}

export type Finish = 'filled' | 'cancelled' | 'ejected' | 'invalidated';

/**
 * The MarketBook actor's state. Not plain JSON (Maps, an object graph): snapshots go through
 * toSnapshot/fromSnapshot. evolve mutates it in place and returns the same object (the runtime owns
 * it); decide and the reads never write it.
 */
export interface BookState {
  key: string;
  market: Market | null;
  /** Level granularity in price micro-units: the tick, or the gcd of the ticks seen while orders rested. */
  gran: number;
  /** 1_000_000 / gran: a ladder has L + 1 levels; valid price indexes are 1..L-1. */
  L: number;
  /** ladders[asset * 2 + side], levels indexed by price / gran. */
  ladders: Level[][];
  /** best[asset * 2 + side]: the highest bid index (-1 when none), the lowest ask index (L + 1 when none). */
  best: number[];
  /** Live orders on the book (and, inside one command's events, the taker being placed). */
  orders: Map<string, BookOrder>;
  /** Delayed orders, in arrival order. */
  held: Map<string, HeldOrder>;
  /** ownerKey → hashes of its live and held orders. */
  byOwner: Map<string, string | Set<string>>;
  /** Recently finished orders (finished.ts): hash → how, and the ring that bounds them. */
  finished: Map<string, { owner: string; how: Finish; slot: number }>;
  finishedRing: string[];
  finishedPos: number;
  /**
   * This book remembers every order it was ever given (live, held, in `finished`, or in `letGo`):
   * true from its first command until `letGo` is full (or when restored from a snapshot that does
   * not say so). While true, an order it does not know and `letGo` does not hold was never placed
   * (an order's hash names its token, hence its market): no ledger read is needed to refuse a duplicate.
   */
  complete: boolean;
  /** The orders `finished` let go while complete (let-go.ts); null before the first, and once not complete. */
  letGo: LetGo | null;
  nextSeq: number;
  lastTrade: LastTrade | null;
  /** owner → outcome token → balance as last seen: what SELL orders with `holdTokens` are held against. */
  balances: Map<string, Map<string, TokenBalance>>;
  /** owner → collateral its wallet granted this book (credit.ts): what its BUYs with `holdCredit` hold. */
  credit: Map<string, Credit>;
  /** Conversions' holds by id (ReserveTokens). */
  reserves: Map<string, TokenReserve>;
  /** Derived indexes (due.ts), rebuilt from the orders by fromSnapshot, never snapshotted: min-heaps
   *  of resting orders by expiration (only those with one) and by bookedAt, dead entries dropped
   *  lazily, so that a PlaceOrder finds in O(1) whether an ejection is due at its `now`. */
  byExpiry: BookOrder[];
  byBookedAt: BookOrder[];
}

/** A decision of the book: the events it takes and the reply to its command. */
export interface Decided<R> {
  events: BookEvent[];
  reply: R;
}
