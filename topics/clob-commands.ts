// Schemas of the commands on `clob.commands` (v1), keyed by market condition id. Amounts travel
// as decimal strings and come back as bigint; prices are integer micro-units.
import { z } from 'zod';

const big = z.union([z.string().regex(/^\d{1,24}$/), z.number().int().nonnegative(), z.bigint()]).transform((v) => BigInt(v));
const now = z.number().int().nonnegative();

export const orderInput = z.object({
  hash: z.string().regex(/^0x[0-9a-f]{64}$/), maker: z.string().min(1), tokenId: z.string().min(1), side: z.enum(['BUY', 'SELL']),
  price: z.number().int().min(0).max(1_000_000), size: big, feeRateBps: z.number().int().min(0).max(65_535),
  expiration: z.number().int().nonnegative(), orderType: z.enum(['GTC', 'FOK', 'GTD']), createdAt: now,
});

export const marketInput = z.object({
  condition_id: z.string(), yes_token_id: z.string(), no_token_id: z.string(), tick_size: z.union([z.string(), z.number()]).optional(),
  min_size: z.union([z.string(), z.number()]).optional(), taker_fee_bps: z.number().int().optional(),
  start_time: z.union([z.string(), z.number()]).nullable().optional(), delay_ms: z.number().int().optional(),
  status: z.enum(['open', 'closed', 'resolved']).optional(),
});

export const bookCommand = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ConfigureMarket'), market: marketInput, now: now.optional() }),
  z.object({ type: z.literal('PlaceOrder'), order: orderInput, now, mintMerge: z.boolean(), distortionBound: z.number().int().min(0).max(1_000_000), maxMakersPerTrade: z.number().int().min(1).max(10_000).optional(), maxMakersPerMintMergeTrade: z.number().int().min(1).max(10_000).optional(), tradeId: z.string().optional(), maxOpenOrders: z.number().int().min(1).max(1_000_000).optional() }),
  z.object({ type: z.literal('CancelOrders'), owner: z.string().min(1), orderIds: z.array(z.string()).max(10_000).optional(), all: z.boolean().optional(), assetId: z.string().optional(), now, reason: z.string().max(64).optional() }),
  z.object({ type: z.literal('InvalidateOrders'), orderIds: z.array(z.string()).max(10_000), reason: z.string().max(200), tradeId: z.string(), now: now.optional() }),
  z.object({ type: z.literal('Expire'), now }),
  z.object({ type: z.literal('StartGame'), now }),
  z.object({ type: z.literal('ReleaseDelayed'), now }),
  // The settlement executor's status of a trade (issue 5).
  z.object({
    type: z.literal('UpdateTrade'), tradeId: z.string().min(1).max(300), status: z.enum(['MINED', 'CONFIRMED', 'RETRYING', 'FAILED']), now,
    transactionHash: z.string().max(128).optional(), attempt: z.number().int().min(0).max(1000).optional(), reason: z.string().max(500).optional(),
  }),
  // Reads through the actor (book-only routes): no events.
  z.object({ type: z.literal('ReadOrders'), owner: z.string().min(1), assetId: z.string().optional(), orderId: z.string().optional() }),
  z.object({ type: z.literal('ReadQuote'), mintMerge: z.boolean().optional() }),
  // The public book (/v1/book): aggregated levels of both outcome views, the book's seq, the last trade.
  z.object({ type: z.literal('ReadBook'), mintMerge: z.boolean() }),
]);

export type BookCommandWire = z.infer<typeof bookCommand>;
