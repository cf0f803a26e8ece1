// The `clob.commands` topic (v1), keyed by market condition id: the MarketBook's commands as zod
// schemas and, per command type, the reply its owner sends back. Senders build `BookCommandInput`
// (amounts as decimal strings, numbers or bigint); the runtime parses with `bookCommand` and the
// decider sees `BookCommand` (amounts as bigint). Amounts are micro-units; prices are integer
// micro-units of collateral per 1 unit of token (0 < price < 1_000_000); times are ms since the
// epoch except `expiration`, which is unix seconds as in the signed order.
import { z } from 'zod';
import { TOPICS } from './names.ts';

/** The topic's name (before the deployment's prefix); its key is the market's condition id. */
export const BOOK_TOPIC = TOPICS.clobCommands;

const big = z.union([z.string().regex(/^\d{1,24}$/), z.number().int().nonnegative(), z.bigint()]).transform((v) => BigInt(v));
const now = z.number().int().nonnegative();

export const side = z.enum(['BUY', 'SELL']);
/** A token account as read at `slot`: its amount and, when known, its standing allowance. */
const balance = z.object({
  amount: big,
  slot: z.number().int().nonnegative(),
  delegate: z.string().min(1).max(64).nullable().optional(),
  delegatedAmount: big.optional(),
});
export type BalanceInput = z.output<typeof balance>;
export const orderType = z.enum(['GTC', 'FOK', 'GTD']);
export const marketStatus = z.enum(['open', 'closed', 'resolved']);
/** Settlement progress of a trade, from the executor (issue 5): recorded on the ledger as is. */
export const settlementStatus = z.enum(['MINED', 'CONFIRMED', 'RETRYING', 'FAILED']);

export type Side = z.infer<typeof side>;
export type OrderType = z.infer<typeof orderType>;
export type MarketStatus = z.infer<typeof marketStatus>;
export type SettlementStatus = z.infer<typeof settlementStatus>;

/** An order as it reaches the book (signature and hash checked at the edge: src/clob/signed-order.ts).
 *  A BUY's signed makerAmount is price × size / 1e6 exactly (the edge accepts exact prices only).
 *  `expiration`: unix seconds, 0 = none; `createdAt`: ms. */
export const orderInput = z.object({
  hash: z.string().regex(/^0x[0-9a-f]{64}$/),
  maker: z.string().min(1),
  tokenId: z.string().min(1),
  side,
  price: z.number().int().min(0).max(1_000_000),
  size: big,
  feeRateBps: z.number().int().min(0).max(65_535),
  expiration: z.number().int().nonnegative(),
  orderType,
  createdAt: now,
});

/** The market as the catalog sends it (tick_size and min_size are decimal token units; start_time
 *  ISO 8601, ms since the epoch, or null). */
export const marketInput = z.object({
  condition_id: z.string(),
  yes_token_id: z.string(),
  no_token_id: z.string(),
  tick_size: z.union([z.string(), z.number()]).optional(),
  min_size: z.union([z.string(), z.number()]).optional(),
  taker_fee_bps: z.number().int().optional(),
  start_time: z.union([z.string(), z.number()]).nullable().optional(),
  delay_ms: z.number().int().optional(),
  status: marketStatus.optional(),
});

export type OrderInput = z.output<typeof orderInput>;
export type MarketInput = z.output<typeof marketInput>;

export const configureMarket = z.object({ type: z.literal('ConfigureMarket'), market: marketInput, now: now.optional() });
export const placeOrder = z.object({
  type: z.literal('PlaceOrder'),
  order: orderInput,
  now,
  mintMerge: z.boolean(),
  /** Price micro-units, e.g. 0.02 → 20_000: how far the fill price may drift from the reference
   *  price (the best opposite price when the order arrived, the taker's own orders included). */
  distortionBound: z.number().int().min(0).max(1_000_000),
  /** Most maker legs in each COMPLEMENTARY trade of this execution, so that its settlement
   *  transaction fits (CLOB_MAX_MAKERS_PER_TRADE): when a trade is full, the next maker opens a new
   *  trade (the sweep goes on). Absent: no cap. */
  maxMakersPerTrade: z.number().int().min(1).max(10_000).optional(),
  /** The same for each MINT (or MERGE) trade (CLOB_MAX_MAKERS_PER_MINT_MERGE_TRADE). Absent:
   *  `maxMakersPerTrade` (as commands from before this field were decided). */
  maxMakersPerMintMergeTrade: z.number().int().min(1).max(10_000).optional(),
  /** Id of the first trade this execution produces (default `t-<order hash>`); the next ones, in
   *  the order they are opened, get `:1`, `:2`, … */
  tradeId: z.string().optional(),
  /** Most live and held orders one wallet may have on this book (CLOB_MAX_OPEN_ORDERS_PER_MARKET):
   *  at the cap a GTC/GTD order is rejected, a FOK one (it never rests) is not. Absent: no cap. */
  maxOpenOrders: z.number().int().min(1).max(1_000_000).optional(),
  /** Handed on by the maker's wallet, which already holds the order's amount for good (wallet
   *  PlaceOrder): no confirmation goes back, and an order the book refuses has its hold returned. */
  held: z.boolean().optional(),
  /** Warnings the wallet found (e.g. `allowance`), given back in the answer before the book's own. */
  warnings: z.array(z.string().min(1).max(32)).max(8).optional(),
  /**
   * A SELL straight from the front door: the book itself holds the order's tokens (an outcome token
   * belongs to this market alone, so its balance is kept here, not by the wallet), against the
   * balance on record or the one brought (`balance`, newest slot wins). Refused with
   * INSUFFICIENT_BALANCE or BALANCE_UNKNOWN (the sender reads the chain and asks again) when it does
   * not fit. `delegate`: the allowance the order's `allowance` warning is checked against.
   */
  holdTokens: z.object({ balance: balance.optional(), delegate: z.string().min(1).max(64).nullable() }).optional(),
  /**
   * A BUY straight from the front door: the book holds its collateral out of the credit the
   * maker's wallet granted this market (actors/market-book/credit.ts). Short of credit, the book
   * hands the order on to the wallet (`walletTopic`) with what credit it had left, asking for the
   * order's amount (wallet Grant); the wallet grants it (and a chunk more) and hands the order back
   * (`bookTopic`) with `granted`, or answers the refusal itself. `balance`: the wallet's collateral
   * as read, for a wallet seen the first time; `attempt` names this try (its hand-ons' ids).
   */
  holdCredit: z
    .object({
      walletTopic: z.string().min(1).max(255),
      bookTopic: z.string().min(1).max(255),
      balance: z.record(z.string(), z.unknown()).optional(),
      delegate: z.string().min(1).max(64).nullable(),
      /** the standing allowance of the wallet's collateral as the sender last saw it (the `allowance` warning) */
      allowance: z.object({ delegate: z.string().min(1).max(64).nullable(), amount: big }).optional(),
      attempt: z.string().min(1).max(32),
    })
    .optional(),
  /** Credit the wallet granted with the order handed back (Grant): recorded, then the order placed. */
  granted: z
    .object({ amount: big, allowance: z.object({ delegate: z.string().min(1).max(64).nullable(), amount: big }).optional() })
    .optional(),
  /**
   * false: the sender did not read the ledger for the order (a signed order is placed once, ever).
   * The book takes an order it does not remember as new only while it remembers every order it was
   * ever given (BookState.complete) and its filter of the finished orders it let go does not say it
   * may have had this one; otherwise it answers CHECK_LEDGER (nothing decided) and the sender reads
   * the ledger and asks again without it. Absent: the sender read the ledger first, as
   * every sender did before this field.
   */
  ledgerChecked: z.literal(false).optional(),
});
/**
 * Gives the owner's wallet back the credit this book holds for it and no order uses (a refusal for
 * balance elsewhere recalls it first): handed on to the wallet (`walletTopic`), which answers.
 */
export const returnCredit = z.object({
  type: z.literal('ReturnCredit'),
  owner: z.string().min(1).max(64),
  walletTopic: z.string().min(1).max(255),
  now,
});
/** An outcome token account of `owner` as read (or notified) at its slot: the newest slot wins. */
export const seeBalance = z.object({
  type: z.literal('SeeBalance'),
  owner: z.string().min(1).max(64),
  asset: z.string().min(1),
  balance,
  now,
});
/**
 * Holds `amount` of each of `assets` (outcome tokens of this market) of `owner` for a conversion
 * (merge_tokens) until ReleaseTokens with the same id, or for `holdMs` at most: what resting SELL
 * orders hold stays theirs (the conversion is refused instead). All or nothing.
 */
export const reserveTokens = z.object({
  type: z.literal('ReserveTokens'),
  id: z.string().min(1).max(200),
  owner: z.string().min(1).max(64),
  holds: z
    .array(z.object({ asset: z.string().min(1), amount: big, balance: balance.optional() }))
    .min(1)
    .max(2),
  holdMs: z.number().int().positive().max(600_000),
  now,
});
export const releaseTokens = z.object({ type: z.literal('ReleaseTokens'), id: z.string().min(1).max(200), now });
/** reason: 'user' (default) or e.g. 'heartbeat_timeout' (cancel-on-disconnect); carried by OrderCancelled. */
export const cancelOrders = z.object({
  type: z.literal('CancelOrders'),
  owner: z.string().min(1),
  orderIds: z.array(z.string()).max(10_000).optional(),
  all: z.boolean().optional(),
  assetId: z.string().optional(),
  now,
  reason: z.string().max(64).optional(),
  /**
   * The wallets' topic (`wallet.commands` with the deployment's prefix): the book hands the freeing
   * of what the cancelled orders hold on to the owner's wallet (ReleaseOrders, with the answer), and
   * the wallet answers the asker once the holds are free (read your writes, no second ask). Absent
   * (or a very large cancel): the book answers, and its releases follow through the outbox.
   */
  releaseTo: z.string().min(1).max(255).optional(),
});
export const invalidateOrders = z.object({
  type: z.literal('InvalidateOrders'),
  orderIds: z.array(z.string()).max(10_000),
  reason: z.string().max(200),
  tradeId: z.string(),
  now: now.optional(),
});
export const expire = z.object({ type: z.literal('Expire'), now });
export const startGame = z.object({ type: z.literal('StartGame'), now });
export const releaseDelayed = z.object({ type: z.literal('ReleaseDelayed'), now });
/** The settlement executor's status of a trade (issue 5). */
export const updateTrade = z.object({
  type: z.literal('UpdateTrade'),
  tradeId: z.string().min(1).max(300),
  status: settlementStatus,
  now,
  transactionHash: z.string().max(128).optional(),
  attempt: z.number().int().min(0).max(1000).optional(),
  reason: z.string().max(500).optional(),
});
// Reads through the actor (book-only routes): no events.
export const readOrders = z.object({
  type: z.literal('ReadOrders'),
  owner: z.string().min(1),
  assetId: z.string().optional(),
  orderId: z.string().optional(),
});
export const readQuote = z.object({ type: z.literal('ReadQuote'), mintMerge: z.boolean().optional() });
/** The public book (/v1/book): aggregated levels of both outcome views, the book's seq, the last trade. */
export const readBook = z.object({ type: z.literal('ReadBook'), mintMerge: z.boolean() });

export const bookCommand = z.discriminatedUnion('type', [
  configureMarket,
  placeOrder,
  cancelOrders,
  invalidateOrders,
  expire,
  startGame,
  releaseDelayed,
  updateTrade,
  seeBalance,
  returnCredit,
  reserveTokens,
  releaseTokens,
  readOrders,
  readQuote,
  readBook,
]);

/** Any command on the topic as a sender writes it. */
export type BookCommandInput = z.input<typeof bookCommand>;
/** Any command on the topic as the runtime hands it to the book (parsed: amounts are bigint). */
export type BookCommandWire = z.output<typeof bookCommand>;
/** The commands the matching engine decides (the reads are answered from its state). */
export type BookCommand = Exclude<BookCommandWire, { type: BookRead['type'] }>;
export type BookRead = z.output<typeof readOrders> | z.output<typeof readQuote> | z.output<typeof readBook>;

export type ConfigureMarket = z.output<typeof configureMarket>;
export type PlaceOrder = z.output<typeof placeOrder>;
export type CancelOrders = z.output<typeof cancelOrders>;
export type InvalidateOrders = z.output<typeof invalidateOrders>;
export type Expire = z.output<typeof expire>;
export type StartGame = z.output<typeof startGame>;
export type ReleaseDelayed = z.output<typeof releaseDelayed>;
export type UpdateTrade = z.output<typeof updateTrade>;
export type SeeBalance = z.output<typeof seeBalance>;
export type ReturnCredit = z.output<typeof returnCredit>;
export type ReserveTokens = z.output<typeof reserveTokens>;
export type ReleaseTokens = z.output<typeof releaseTokens>;

// ---- replies (as the book decides them; over the bus a bigint arrives as its decimal string) ----

export type RejectCode =
  | 'INSUFFICIENT_BALANCE'
  | 'BALANCE_UNKNOWN'
  | 'INVALID_ORDER'
  | 'INVALID_TICK_SIZE'
  | 'INVALID_MIN_SIZE'
  | 'FEE_RATE_TOO_LOW'
  | 'FOK_NOT_FILLED'
  | 'ORDER_EXPIRED'
  | 'MARKET_CLOSED'
  | 'MARKET_NOT_FOUND'
  | 'DUPLICATE_ORDER';

export interface Rejection {
  /** CHECK_LEDGER: the sender is to read the ledger for the order and ask again (`ledgerChecked`). */
  error: RejectCode | 'INVALID_MARKET' | 'INVALID_COMMAND' | 'CHECK_LEDGER';
  message: string;
  /**
   * CHECK_LEDGER only: 'order' when only this order may have been given to the book before (its
   * let-go filter says "maybe"), 'book' (or absent, from a book of an earlier version) when the
   * book no longer remembers every order it was given: its next unknown orders will ask as well.
   */
  scope?: 'order' | 'book';
}

/** The market as the book keeps it. */
export interface Market {
  conditionId: string;
  yesTokenId: string;
  noTokenId: string;
  /** Tick in price micro-units (0.01 → 10_000). */
  tick: number;
  /** Minimum order size in token micro-units. */
  minSize: bigint;
  takerFeeBps: number;
  /** ms since the epoch, or null when the market has no start. */
  startTime: number | null;
  delayMs: number;
  status: MarketStatus;
}

export interface PlaceAccepted {
  /** matched: something filled on arrival; live: rests unfilled; delayed: held. ('unmatched' is no
   *  longer decided: a GTC/GTD remainder always rests.) */
  status: 'live' | 'matched' | 'delayed' | 'unmatched';
  orderID: string;
  /** What the taker gave in fills on arrival: collateral for BUY, tokens for SELL. */
  makingAmount: bigint;
  /** What the taker got in fills on arrival: tokens for BUY, collateral for SELL. */
  takingAmount: bigint;
  tradeIDs: string[];
  warnings: string[];
  sizeMatched: bigint;
  /** What rests on the book now (0 when nothing rests). */
  remaining: bigint;
  /** Taker fee of the arrival fills. */
  fee: bigint;
}
export type PlaceReply = PlaceAccepted | Rejection;

export type CancelReason = 'order not found' | 'already filled' | 'already cancelled' | 'not yours';
/** not_canceled (and ReleaseReply.replies) are null-prototype objects keyed by order hash. */
export interface CancelReply {
  canceled: string[];
  not_canceled: Record<string, CancelReason>;
  /** Answered by the owner's wallet after it freed what the cancelled orders held (`releaseTo`). */
  released?: true;
}
export interface InvalidateReply {
  invalidated: string[];
  not_found: string[];
}
export interface EjectReply {
  ejected: string[];
}
export interface ReleaseReply {
  released: string[];
  replies: Record<string, PlaceReply>;
}
export type ConfigureReply = { ok: true; market: Market } | Rejection;
export interface UpdateTradeReply {
  ok: true;
  trade_id: string;
  status: SettlementStatus;
}

/** A book-form order (contracts/clob.md, Reads), amounts in micro-units, price in micro. */
export interface OrderView {
  orderHash: string;
  maker: string;
  market: string;
  assetId: string;
  side: Side;
  price: number;
  originalSize: bigint;
  remainingSize: bigint;
  sizeMatched: bigint;
  feeRateBps: number;
  orderType: OrderType;
  expiration: number;
  createdAt: number;
  status: 'LIVE' | 'DELAYED';
}

export interface Quote {
  price: number;
  size: bigint;
}
export interface LastTrade {
  asset_id: string;
  side: Side;
  price: number;
  size: bigint;
  match_time: number;
}
/** Best bid and ask of each outcome; `yesMintMerge`: the YES quote as a taker meets it with
 *  mint/merge matching on (asked with `mintMerge`). */
export interface QuoteReply {
  yes: { bid: Quote | null; ask: Quote | null } | null;
  no: { bid: Quote | null; ask: Quote | null } | null;
  last: LastTrade | null;
  yesMintMerge?: { bid: Quote | null; ask: Quote | null };
}
/** An outcome's aggregated levels, sizes as decimal strings: bids best first, asks best first. */
export interface BookLevels {
  bids: [price: number, size: string][];
  asks: [price: number, size: string][];
}
/** Both outcome views of the book (null before the market is configured), its seq and last trade. */
export interface BookView {
  seq: number;
  yes: BookLevels | null;
  no: BookLevels | null;
  last: LastTrade | null;
}

/** A token hold of the book (ReserveTokens, ReleaseTokens): ok, or it does not fit / no balance on record. */
export type TokensReply =
  | { ok: true; released?: boolean }
  | { ok: false; code: 'INSUFFICIENT_BALANCE' | 'BALANCE_UNKNOWN'; asset: string; available: string; message: string };

/** The reply to each command type. */
export interface BookReplies {
  ConfigureMarket: ConfigureReply;
  PlaceOrder: PlaceReply;
  CancelOrders: CancelReply;
  InvalidateOrders: InvalidateReply;
  Expire: EjectReply;
  StartGame: EjectReply;
  ReleaseDelayed: ReleaseReply;
  UpdateTrade: UpdateTradeReply | Rejection;
  SeeBalance: { ok: true };
  ReturnCredit: { ok: true; returned: string };
  ReserveTokens: TokensReply;
  ReleaseTokens: TokensReply;
  ReadOrders: { orders: OrderView[] };
  ReadQuote: QuoteReply;
  ReadBook: BookView;
}
export type BookReply = BookReplies[BookCommand['type']];

/** The topic as a typed channel: what senders write and what each command type answers. */
export interface BookProtocol {
  cmd: BookCommandInput;
  replies: BookReplies;
}
