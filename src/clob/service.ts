// The order book's use cases between the front door and the actors: placing an order is one pass
// through two actors on two partitions (the Wallet holds its amount and hands it on, the MarketBook
// matches it and answers; see src/clob/pipeline.md), cancels fan out to the books and free the cancelled orders' holds before answering,
// reads come from the books or the ledger read models. Balances come from the Wallet actor, kept
// current from the chain by src/clob/balances.ts: no chain read per order.
import { AskTimeout, channel, type Answer, type Asker, type Channel, type Protocol } from '../runtime/asker.ts';
import type { BookProtocol, PlaceReply } from '../../topics/clob-commands.ts';
import type { WalletProtocol, WalletReply } from '../../topics/wallet-commands.ts';
import { DomainError, invalid, unavailable } from '../errors.ts';
import { microToDecimal } from '../../topics/units.ts';
import type { ChainGateway, TokenHolding } from '../chain/gateway.ts';
import type { Catalog } from './catalog.ts';
import type { OrderIndex } from './order-index.ts';
import { balanceOf, type BalanceWatch } from './balances.ts';
import { checkOrderSignature, orderHash, orderId, priceAndSize, type SignedOrder } from './signed-order.ts';
import { inlineVerifier, type SignatureVerifier } from './sigverify.ts';

import type { Db } from '../db.ts';

export interface ClobServiceDeps {
  asker: Asker;
  db: () => Db;
  catalog: Catalog;
  /** What the ledger knows of orders, read in batches (src/clob/order-index.ts). */
  orders: OrderIndex;
  chain: () => ChainGateway | null;
  /** The wallets' balances: seeded once per node, then watched (src/clob/balances.ts). */
  balances: BalanceWatch;
  bookTopic: string;
  walletTopic: string;
  mintMerge: boolean;
  distortionBound: number;
  /** CLOB_MAX_MAKERS_PER_TRADE: maker fills per COMPLEMENTARY trade of one taker execution */
  maxMakersPerTrade: number;
  /** CLOB_MAX_MAKERS_PER_MINT_MERGE_TRADE: maker fills per MINT or MERGE trade (default: maxMakersPerTrade) */
  maxMakersPerMintMergeTrade?: number;
  collateralMint: () => Promise<string | null>;
  delegate: () => string | null;
  /** Where order signatures are checked (src/clob/sigverify.ts); inline when absent. */
  verifier?: SignatureVerifier;
  /** CLOB_MAX_OPEN_ORDERS_PER_MARKET: live and held orders per wallet and market */
  maxOpenOrdersPerMarket?: number;
  log?: { warn(o: object, m: string): void };
  /** Counts an order's ledger read: before its ask, or asked by its book (forgetful, or a filter's "maybe"). */
  ledgerRead?(why: 'before_ask' | 'book_forgets' | 'book_filter'): void;
}

/** A rejection of POST /v1/order: `code` is one of contracts/clob.md's. */
export class OrderRejected extends DomainError {
  constructor(code: string, message: string) {
    super('invalid', code, message);
  }
}

const reject = (code: string, message: string) => new OrderRejected(code, message);

export class ClobService {
  private readonly book: Channel<BookProtocol>;
  private readonly wallet: Channel<WalletProtocol>;

  constructor(private d: ClobServiceDeps) {
    this.book = channel(d.bookTopic);
    this.wallet = channel(d.walletTopic);
  }

  private async ask<P extends Protocol, const C extends P['cmd']>(ch: Channel<P>, key: string, cmd: C, id?: string): Promise<Answer<P, C>> {
    try {
      return await this.d.asker.askTo(ch, key, cmd, { id });
    } catch (e) {
      if (e instanceof AskTimeout) throw unavailable('unavailable', 'the owner did not answer in time; retry (the request is idempotent)');
      throw e;
    }
  }

  async placeOrder(wallet: string, order: SignedOrder, orderType: 'GTC' | 'FOK' | 'GTD', now = Date.now()) {
    if (order.maker !== wallet) throw reject('NOT_OWNER', 'order.maker must be the signed-in wallet');
    if (order.signer !== order.maker) throw reject('INVALID_ORDER', 'signer must equal maker');
    const hash = orderHash(order);
    if (!(await checkOrderSignature(this.d.verifier ?? inlineVerifier, order, hash)))
      throw reject('INVALID_SIGNATURE', 'the signature does not match the order hash and signer');
    const id = orderId(hash);
    // A signed order is placed once, ever: the ledger remembers every order; a book every order it
    // was given until it first lets a finished one go (BookState.complete). With the token's market
    // in memory the ledger is not read here (`seen` undefined): the book refuses a duplicate it
    // knows, and asks for the read (CHECK_LEDGER) when it may have forgotten the order.
    const { seen, market } = await this.d.orders.forOrder(order.tokenId, id);
    if (seen !== undefined) this.d.ledgerRead?.('before_ask');
    if (seen) throw reject('DUPLICATE_ORDER', `order ${id} was already posted`);
    if (!market) throw reject('MARKET_NOT_FOUND', `no market trades token ${order.tokenId}`);
    if (market.status !== 'open') throw reject('MARKET_CLOSED', `market ${market.condition_id} is ${market.status}`);
    const { price, size, exact } = priceAndSize(order);
    if (size <= 0n || price <= 0n || price >= 1_000_000n)
      throw reject('INVALID_ORDER', 'amounts must give a price strictly between 0 and 1');
    if (!exact || price % market.tick_size !== 0n)
      throw reject('INVALID_TICK_SIZE', `price must sit on the market tick ${Number(market.tick_size) / 1e6}`);
    if (size < market.min_size) throw reject('INVALID_MIN_SIZE', `size below the market minimum ${Number(market.min_size) / 1e6}`);
    const expiration = Number(order.expiration);
    if (orderType === 'GTD' && expiration <= Math.floor(now / 1000))
      throw reject('ORDER_EXPIRED', 'a GTD order needs an expiration in the future');
    if (orderType !== 'GTD' && expiration !== 0 && expiration <= Math.floor(now / 1000))
      throw reject('ORDER_EXPIRED', 'the order has expired');

    // What the order holds: collateral for a BUY, its tokens for a SELL.
    const chain = this.d.chain();
    if (!chain) throw unavailable('chain_unavailable', 'no chain RPC is configured: balances cannot be checked');
    const collateral = await this.d.collateralMint();
    if (!collateral) throw unavailable('config_unknown', 'the collateral mint is not known yet');
    const asset = order.side === 'BUY' ? 'collateral' : order.tokenId;
    const mint = order.side === 'BUY' ? collateral : order.tokenId;
    const amount = BigInt(order.makerAmount);
    const book = {
      type: 'PlaceOrder',
      now,
      mintMerge: this.d.mintMerge,
      distortionBound: Math.round(this.d.distortionBound * 1_000_000),
      maxMakersPerTrade: this.d.maxMakersPerTrade,
      maxMakersPerMintMergeTrade: this.d.maxMakersPerMintMergeTrade ?? this.d.maxMakersPerTrade,
      maxOpenOrders: this.d.maxOpenOrdersPerMarket,
      order: {
        hash: id,
        maker: wallet,
        tokenId: order.tokenId,
        side: order.side,
        price: Number(price),
        size: size.toString(),
        feeRateBps: Number(order.feeRateBps),
        expiration,
        orderType,
        createdAt: now,
      },
    };
    const o = { id, asset, mint, amount, market: market.condition_id };
    const send = (cmd: Record<string, unknown>) => (order.side === 'SELL' ? this.sell(wallet, o, cmd) : this.buy(wallet, o, cmd));
    let reply = await send(seen === undefined ? { ...book, ledgerChecked: false } : book);
    if ('error' in reply && reply.error === 'CHECK_LEDGER') {
      // Nothing was decided (nor remembered as answered): the same asks, once the ledger is read. A
      // book that no longer remembers every order will ask for its next orders too: read first a while.
      const scope = reply.scope ?? 'book';
      this.d.ledgerRead?.(scope === 'order' ? 'book_filter' : 'book_forgets');
      if (scope === 'book') this.d.orders.readLedgerFirst(order.tokenId);
      if (await this.d.orders.posted(id)) throw reject('DUPLICATE_ORDER', `order ${id} was already posted`);
      reply = await send(book);
    }
    if ('ok' in reply) {
      if (reply.ok) throw new Error('the wallet held the order but did not hand it on'); // a wallet that fits always forwards
      if (reply.code === 'BALANCE_UNKNOWN') throw unavailable('balance_unavailable', reply.message);
      throw reject('INSUFFICIENT_BALANCE', reply.message ?? 'maker amount exceeds the unreserved balance');
    }
    // Refused by the book: its hold went back to the wallet with the refusal (HoldReturned).
    if ('error' in reply && reply.error === 'BALANCE_UNKNOWN') throw unavailable('balance_unavailable', reply.message);
    if ('error' in reply)
      throw reject(reply.error === 'INVALID_COMMAND' || reply.error === 'INVALID_MARKET' ? 'INVALID_ORDER' : reply.error, reply.message);
    this.d.orders.placed(id, market.condition_id); // a cancel of it is routed from memory
    return {
      success: true,
      errorMsg: '',
      orderID: id,
      status: reply.status,
      makingAmount: String(reply.makingAmount ?? '0'),
      takingAmount: String(reply.takingAmount ?? '0'),
      tradeIDs: reply.tradeIDs ?? [],
      warnings: reply.warnings ?? [],
    };
  }

  /**
   * A BUY, most often in one hop: its book holds its collateral out of the credit the wallet granted
   * that market (actors/market-book/credit.ts) and matches it. Short of credit, the book hands the
   * order to the wallet, which grants more against the balance it keeps (no chain read) and hands
   * it back, or refuses it; a refusal naming other markets whose books hold idle credit of the
   * wallet has it recalled (ReturnCredit) and the order asked once more, so that no order is refused
   * while the wallet's collateral sits unused elsewhere. Only the first order this node takes for
   * (wallet, collateral) brings a balance read; a wallet with no balance on record, or one the
   * balance on record does not cover, is read once more. An RPC outage leaves orders that fit the
   * known balance going; a wallet never seen answers 503 (`balance_unavailable`).
   */
  private async buy(
    wallet: string,
    o: { id: string; asset: string; mint: string; amount: bigint; market: string },
    book: Record<string, unknown>,
  ) {
    const ask = async (h: TokenHolding | null, attempt: string) => {
      const seen = h ?? this.d.balances.known(wallet, o.mint);
      return (await this.ask(
        this.book,
        o.market,
        {
          ...(book as Extract<BookProtocol['cmd'], { type: 'PlaceOrder' }>),
          holdCredit: {
            walletTopic: this.d.walletTopic,
            bookTopic: this.d.bookTopic,
            ...(h ? { balance: balanceOf(h) } : {}),
            delegate: this.d.delegate(),
            ...(seen ? { allowance: { delegate: seen.delegate, amount: seen.delegatedAmount.toString() } } : {}),
            attempt,
          },
        },
        attempt === 'first' ? `place:${o.id}` : `place:${o.id}:${attempt}`,
      )) as PlaceReply | WalletReply;
    };
    const recalled = async (r: PlaceReply | WalletReply, attempt: string) => {
      if (!('ok' in r) || r.ok || !r.recall?.length) return r;
      await this.recall(wallet, r.recall, o.id);
      return ask(null, attempt);
    };
    const seeded = await this.d.balances.seed(wallet, o.mint, o.asset);
    const first = await recalled(await ask(seeded, 'first'), 'recall');
    return this.readAgain(wallet, o.mint, first, {
      seeded: !!seeded,
      short: ('ok' in first && !first.ok) || ('error' in first && first.error === 'INSUFFICIENT_BALANCE'),
      unknown: 'ok' in first && !first.ok && first.code === 'BALANCE_UNKNOWN',
      again: async (fresh) => recalled(await ask(fresh, 'read'), 'read-recall'),
    });
  }

  /**
   * A refusal for balance stands when this node has just read the chain for the order (`seeded`);
   * otherwise the chain is read once and the order asked again. A balance unknown and unreadable
   * (an RPC outage for a wallet never seen) answers 503; one known that does not fit stands.
   */
  private async readAgain<R>(
    wallet: string,
    mint: string,
    first: R,
    o: { seeded: boolean; short: boolean; unknown: boolean; again(fresh: TokenHolding): Promise<R> },
  ): Promise<R> {
    if (!o.short || o.seeded) return first;
    let fresh: TokenHolding;
    try {
      fresh = await this.d.balances.read(wallet, mint);
    } catch (e) {
      if (!o.unknown) return first;
      throw unavailable(
        'balance_unavailable',
        `the wallet's balance is not known yet and the chain cannot be read: ${(e as Error).message}`,
      );
    }
    return o.again(fresh);
  }

  /** Has the books of these markets give the wallet back the credit no order of theirs uses. */
  private async recall(wallet: string, markets: string[], id: string) {
    await Promise.all(
      markets.map((m) =>
        this.ask(
          this.book,
          m,
          { type: 'ReturnCredit', owner: wallet, walletTopic: this.d.walletTopic, now: Date.now() },
          `recall:${id}:${m}`,
        ).catch((err) => this.d.log?.warn({ err, wallet, market: m }, 'credit could not be recalled')),
      ),
    );
  }

  /**
   * A SELL in one hop: its tokens belong to this market alone, so its book holds them (against the
   * balance it keeps for the wallet, as the wallet does for collateral) and matches the order in the
   * same command. The chain is read as for a BUY: the first time this node sees (wallet, token), and
   * once more before a refusal for balance.
   */
  private async sell(
    wallet: string,
    o: { id: string; asset: string; mint: string; amount: bigint; market: string },
    book: Record<string, unknown>,
  ) {
    const ask = (h: TokenHolding | null, key: string) =>
      this.ask(
        this.book,
        o.market,
        {
          ...(book as Extract<BookProtocol['cmd'], { type: 'PlaceOrder' }>),
          holdTokens: { ...(h ? { balance: balanceOf(h) } : {}), delegate: this.d.delegate() },
        },
        key,
      );
    const seeded = await this.d.balances.seed(wallet, o.mint, o.asset, o.market);
    const first = await ask(seeded, `place:${o.id}`);
    return this.readAgain(wallet, o.mint, first, {
      seeded: !!seeded,
      short: 'error' in first && (first.error === 'INSUFFICIENT_BALANCE' || first.error === 'BALANCE_UNKNOWN'),
      unknown: 'error' in first && first.error === 'BALANCE_UNKNOWN',
      again: (fresh) => ask(fresh, `place:${o.id}:read`),
    });
  }

  /**
   * Read your writes: frees what cancelled orders still hold in their wallet before the cancel
   * answers, so that the freed amount is there for the next order at once. The books' own releases
   * of the same orders come later through the outbox and find nothing left (ReleaseOrders is
   * idempotent by state). Should the wallet not answer in time, the cancel still answers: it is done,
   * and the outbox frees the holds moments later.
   */
  private async releaseHolds(wallet: string, orderIds: string[]) {
    for (let i = 0; i < orderIds.length; i += 5_000) {
      const chunk = orderIds.slice(i, i + 5_000);
      try {
        await this.d.asker.askTo(this.wallet, wallet, { type: 'ReleaseOrders', orderIds: chunk, reason: 'canceled' });
      } catch (err) {
        this.d.log?.warn({ err, wallet, orders: chunk.length }, 'cancelled orders answered before their holds were freed');
      }
    }
  }

  /** Cancels: not atomic across markets; every id ends in canceled or not_canceled. */
  async cancel(wallet: string, sel: { ids?: string[]; all?: boolean; market?: string; assetId?: string }, now = Date.now()) {
    const canceled: string[] = [];
    const notCanceled: Record<string, string> = {};
    const byMarket = new Map<string, string[]>();
    let known = new Map<string, { market: string; owner_lc: string; status: string }>();
    const fromMemory = new Set<string>();
    if (sel.ids) {
      const ids = [...new Set(sel.ids)];
      // Orders placed through this node are routed from memory; the others by their rows.
      const where = ids.length ? await this.d.orders.marketsOf(ids) : { markets: new Map<string, string>(), rows: known };
      known = where.rows;
      for (const id of where.markets.keys()) if (!known.has(id)) fromMemory.add(id);
      for (const id of ids) {
        const m = where.markets.get(id);
        if (!m) {
          notCanceled[id] = 'order not found';
          continue;
        }
        byMarket.set(m, [...(byMarket.get(m) ?? []), id]);
      }
    }
    const markets = sel.ids
      ? [...byMarket.keys()]
      : sel.market
        ? [sel.market.toLowerCase()]
        : (
            await this.d
              .db()
              .execute("select distinct market from open_orders where owner_lc = ? and status in ('LIVE', 'DELAYED')", [
                wallet.toLowerCase(),
              ])
          ).map((r: any) => r.market);
    const replies = await Promise.all(
      markets.map((m) =>
        this.ask(this.book, m, {
          type: 'CancelOrders',
          owner: wallet,
          now,
          ...(sel.ids ? { orderIds: byMarket.get(m) } : { all: true }),
          ...(sel.assetId ? { assetId: sel.assetId } : {}),
          releaseTo: this.d.walletTopic,
        }),
      ),
    );
    const unreleased: string[] = [];
    for (const r of replies) {
      if ('error' in r) continue;
      canceled.push(...(r.canceled ?? []));
      Object.assign(notCanceled, r.not_canceled ?? {});
      // Answered by the wallet (the book handed the release on): the holds are free already.
      if (!r.released) unreleased.push(...(r.canceled ?? []));
    }
    if (unreleased.length) await this.releaseHolds(wallet, unreleased);
    // A book remembers only its recent finished orders; for an older one it says "order not
    // found", but the ledger still knows the order: answer from its row (read now for an order
    // routed from memory).
    const unread = Object.entries(notCanceled).flatMap(([id, reason]) => (reason === 'order not found' && fromMemory.has(id) ? [id] : []));
    if (unread.length) for (const [id, r] of await this.d.orders.rowsOf(unread)) known.set(id, r);
    for (const [id, reason] of Object.entries(notCanceled)) {
      const row = known.get(id);
      if (reason !== 'order not found' || !row || row.status === 'LIVE' || row.status === 'DELAYED') continue;
      notCanceled[id] =
        row.owner_lc !== wallet.toLowerCase() ? 'not yours' : row.status === 'MATCHED' ? 'already filled' : 'already cancelled';
    }
    return { canceled, not_canceled: notCanceled };
  }

  /** Book-only: the caller's orders resting (or delayed) on the books. */
  async bookOrders(wallet: string, f: { market?: string; orderId?: string }) {
    let markets: string[];
    if (f.orderId) {
      markets = (await this.d.db().execute('select market from open_orders where id = ?', [f.orderId])).map((r: any) => r.market);
    } else if (f.market) {
      markets = [f.market.toLowerCase()];
    } else {
      markets = (
        await this.d
          .db()
          .execute("select distinct market from open_orders where owner_lc = ? and status in ('LIVE', 'DELAYED')", [wallet.toLowerCase()])
      ).map((r: any) => r.market);
    }
    const replies = await Promise.all(
      markets.map((m) => this.ask(this.book, m, { type: 'ReadOrders', owner: wallet, ...(f.orderId ? { orderId: f.orderId } : {}) })),
    );
    return replies.flatMap((r) => (r?.orders ?? []).map(bookForm));
  }

  /**
   * A market with its YES book as a taker meets it (with mint/merge, NO orders count at 1 − their
   * price) and the last trade's price in the same terms (a NO trade at q is YES at 1 − q); null when
   * the catalog does not know it. Exact decimals: the book's quote is in micro-units.
   */
  async marketView(conditionId: string) {
    const m = await this.d.catalog.get(conditionId);
    if (!m) return null;
    const quote = await this.quote(conditionId).catch(() => null);
    const fmt = (q: { price: number; size: bigint | string | number } | null | undefined) =>
      q ? { price: dec(q.price), size: dec(q.size) } : null;
    const yes = quote?.yesMintMerge ?? quote?.yes;
    const last = quote?.last ? (quote.last.asset_id === m.no_token_id ? 1_000_000 - quote.last.price : quote.last.price) : null;
    return { ...m, best_bid: fmt(yes?.bid), best_ask: fmt(yes?.ask), last_price: last === null ? null : dec(last) };
  }

  /** The caller's book orders whose price × remaining size reaches `minValue` (a decimal string), compared exactly. */
  async ordersValueRange(wallet: string, minValue: string) {
    const min = scaled(minValue, 12);
    return (await this.bookOrders(wallet, {})).filter((x) => scaled(x.price, 6) * scaled(x.remainingSize, 6) >= min);
  }

  /**
   * The settlement executor's size update: invalidates the orders of a failed trade that still rest,
   * one idempotent command per market (`size-update:<trade>:<market>`).
   */
  async sizeUpdate(b: { trade_id: string; orders: string[]; reason: string }, now = Date.now()) {
    const rows = b.orders.length ? await this.d.db().execute('select id, market from open_orders where id in (?)', [b.orders]) : [];
    const byMarket = new Map<string, string[]>();
    for (const row of rows) byMarket.set(row.market, [...(byMarket.get(row.market) ?? []), row.id]);
    const known = new Set(rows.map((x: any) => x.id));
    const invalidated: string[] = [];
    const notFound = b.orders.filter((id) => !known.has(id));
    for (const [market, ids] of byMarket) {
      const rep = await this.ask(
        this.book,
        market,
        { type: 'InvalidateOrders', orderIds: ids, reason: b.reason, tradeId: b.trade_id, now },
        `size-update:${b.trade_id}:${market}`,
      );
      invalidated.push(...(rep?.invalidated ?? []));
      notFound.push(...(rep?.not_found ?? []));
    }
    return { invalidated, not_found: notFound };
  }

  async quote(conditionId: string) {
    return this.ask(this.book, conditionId.toLowerCase(), { type: 'ReadQuote', mintMerge: this.d.mintMerge });
  }

  /** Tells the book about a catalog change. */
  async configure(conditionId: string) {
    const m = await this.d.catalog.get(conditionId);
    if (!m) return;
    const r = await this.ask(this.book, m.condition_id, {
      type: 'ConfigureMarket',
      now: Date.now(),
      market: {
        condition_id: m.condition_id,
        yes_token_id: m.yes_token_id,
        no_token_id: m.no_token_id,
        tick_size: m.tick_size,
        min_size: m.min_size,
        taker_fee_bps: m.taker_fee_bps,
        start_time: m.start_time,
        delay_ms: m.delay_ms,
        status: m.status,
      },
    });
    if ('error' in r) throw invalid('invalid_market', r.message);
  }
}

/** A non-negative decimal string as an integer of 10^-places units ("0.29", 6 → 290000n). */
function scaled(v: string, places: number): bigint {
  const [whole, frac = ''] = v.split('.');
  return BigInt(whole) * 10n ** BigInt(places) + BigInt(frac.padEnd(places, '0').slice(0, places));
}

const dec = microToDecimal;

/** contracts/clob.md, Reads: a book-form order. */
export function bookForm(o: any) {
  return {
    orderHash: o.orderHash,
    maker: o.maker,
    market: o.market,
    assetId: o.assetId,
    side: o.side,
    price: dec(o.price),
    originalSize: dec(o.originalSize),
    remainingSize: dec(o.remainingSize),
    feeRateBps: String(o.feeRateBps),
    orderType: o.orderType,
    expiration: String(o.expiration),
    createdAt: new Date(Number(o.createdAt)).toISOString(),
  };
}

export { dec as decimal };
