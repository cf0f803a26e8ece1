// ConfigureMarket: the catalog's market (decimal units, ISO times) becomes the book's Market.
import { decimalToMicro, ONE_N } from './amounts.ts';
import { reject, type Decided } from './place.ts';
import type { BookState, ConfigureMarket, ConfigureReply, Market, MarketInput } from './types.ts';

const STATUSES = new Set(['open', 'closed', 'resolved']);

/** Parses and checks a MarketInput; a string explains what is wrong. */
export function parseMarket(key: string, i: MarketInput): Market | string {
  if (!i || typeof i !== 'object') return 'market missing';
  if (String(i.condition_id).toLowerCase() !== key.toLowerCase()) return `condition_id ${i.condition_id} is not this book's market ${key}`;
  if (typeof i.yes_token_id !== 'string' || !i.yes_token_id || typeof i.no_token_id !== 'string' || !i.no_token_id)
    return 'token ids missing';
  if (i.yes_token_id === i.no_token_id) return 'yes_token_id and no_token_id must differ';
  const tick = decimalToMicro(i.tick_size ?? '0.01');
  if (tick === null || tick <= 0n || ONE_N % tick !== 0n || tick * 2n > ONE_N) return 'tick_size must divide 1 (e.g. 0.01, 0.001)';
  const minSize = decimalToMicro(i.min_size ?? '0');
  if (minSize === null) return 'min_size must be a decimal with at most 6 places';
  const takerFeeBps = i.taker_fee_bps ?? 0;
  if (!Number.isInteger(takerFeeBps) || takerFeeBps < 0 || takerFeeBps > 10_000) return 'taker_fee_bps must be an integer in 0..10000';
  const delayMs = i.delay_ms ?? 0;
  if (!Number.isInteger(delayMs) || delayMs < 0) return 'delay_ms must be a non-negative integer';
  let startTime: number | null = null;
  if (i.start_time !== null && i.start_time !== undefined) {
    startTime = typeof i.start_time === 'number' ? i.start_time : Date.parse(i.start_time);
    if (!Number.isSafeInteger(startTime)) return 'start_time must be ISO 8601, unix ms or null';
  }
  const status = i.status ?? 'open';
  if (!STATUSES.has(status)) return 'status must be open, closed or resolved';
  return {
    conditionId: key,
    yesTokenId: i.yes_token_id,
    noTokenId: i.no_token_id,
    tick: Number(tick),
    minSize,
    takerFeeBps,
    startTime,
    delayMs,
    status,
  };
}

const same = (a: Market, b: Market) =>
  a.conditionId === b.conditionId &&
  a.yesTokenId === b.yesTokenId &&
  a.noTokenId === b.noTokenId &&
  a.tick === b.tick &&
  a.minSize === b.minSize &&
  a.takerFeeBps === b.takerFeeBps &&
  a.startTime === b.startTime &&
  a.delayMs === b.delayMs &&
  a.status === b.status;

/** Sets or edits the market. Token ids may not change while orders are live; nothing else is
 *  touched on the book (closing a market stops new orders, resting ones stay until cancelled). */
export function decideConfigure(s: BookState, cmd: ConfigureMarket): Decided<ConfigureReply> {
  const m = parseMarket(s.key, cmd.market);
  if (typeof m === 'string') return { events: [], reply: reject('INVALID_MARKET', m) };
  const cur = s.market;
  if (cur && (cur.yesTokenId !== m.yesTokenId || cur.noTokenId !== m.noTokenId) && (s.orders.size > 0 || s.held.size > 0)) {
    return { events: [], reply: reject('INVALID_MARKET', 'token ids cannot change while orders are live') };
  }
  if (cur && same(cur, m)) return { events: [], reply: { ok: true, market: m } };
  return { events: [{ type: 'MarketConfigured', at: cmd.now ?? 0, market: m }], reply: { ok: true, market: m } };
}
