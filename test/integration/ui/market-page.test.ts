// The market page (issue 18, item 4) in a real browser: headless Chromium (the Debian package
// `chromium`, driven by puppeteer-core) against a node on Kafka, PostgreSQL and the local chain.
// The rendered ladder equals GET /v1/book, then an order that crosses changes the ladder and the
// last trade on the page, live over the node's real /ws/market channel; the NO view mirrors the YES
// one; a screenshot goes to bench/out/market-page.png (UPDATE_SCREENSHOT=1: docs/). Also: the
// static serving (fixed file list, content types, caching, CSP) and GET /v1/market-trades at the
// edge. The failure paths, with a stand-in for the `market` channel in front of the node
// (test/helpers/ws-stand-in.ts): the page applies snapshots and changes, ignores REST while the
// socket is open, resubscribes with last_seq after a gap or a dropped socket, and polls REST while
// it cannot connect.
import test from 'ava';
import { mkdirSync } from 'node:fs';
import { existsSync } from 'node:fs';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { call } from '../../helpers/node.ts';
import { order } from '../../helpers/clob.ts';
import { clobWorld, type ClobWorld } from '../../helpers/clob-world.ts';
import { openapi } from '../../../src/http/openapi.ts';
import { channelStandIn, type WsConn } from '../../helpers/ws-stand-in.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
type Level = { price: string; size: string };

let w: ClobWorld;
let browser: Browser;
test.before(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  w = await clobWorld();
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
});
test.after.always(async () => {
  await browser?.close();
  await w?.close();
});

const place = async (who: 'alice' | 'bob', tok: string, side: 'BUY' | 'SELL', price: string, size: string) => {
  const r = await call(w.node.url, 'POST', '/v1/order', {
    token: who === 'alice' ? w.A : w.B,
    body: { order: order(w[who], tok, side, price, size, { feeRateBps: 100 }), orderType: 'GTC' },
  });
  if (r.status !== 200) throw new Error(`order: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};
const book = async (tok: string): Promise<{ bids: Level[]; asks: Level[] }> => {
  const r = await call(w.node.url, 'GET', `/v1/book?token_id=${tok}`);
  return { bids: r.body.bids, asks: r.body.asks };
};

/** The ladder as the page shows it, best first on both sides (asks are drawn worst at the top). */
const ladder = (page: Page) =>
  page.$$eval('#ladder tr.level', (rows) => {
    const out = { bids: [] as { price: string; size: string }[], asks: [] as { price: string; size: string }[] };
    for (const r of rows as HTMLElement[])
      (r.dataset.side === 'bid' ? out.bids : out.asks).push({ price: r.dataset.price!, size: r.dataset.size! });
    out.asks.reverse();
    return out;
  });
const best = (page: Page) =>
  page.$$eval('#ladder tr.best', (rows) => (rows as HTMLElement[]).map((r) => `${r.dataset.side}:${r.dataset.price}`));
const lastTrade = (page: Page) =>
  page.$eval('#last-trade', (e) => ({ price: (e as HTMLElement).dataset.price ?? null, id: (e as HTMLElement).dataset.tradeId ?? null }));

async function until<T>(what: string, f: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  let v = await f();
  while (!ok(v)) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: last ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 200));
    v = await f();
  }
  return v;
}
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

test.serial('the static files: fixed list, content types, caching, CSP; bad ids are 400, unknown markets 404', async (t) => {
  const id = w.market.condition_id;
  const page = await fetch(`${w.node.url}/ui/markets/${id}`);
  t.is(page.status, 200);
  t.is(page.headers.get('content-type'), 'text/html; charset=utf-8');
  t.is(page.headers.get('cache-control'), 'no-cache');
  t.regex(page.headers.get('content-security-policy') ?? '', /default-src 'none'; script-src 'self'/);
  t.is(page.headers.get('x-content-type-options'), 'nosniff');
  t.regex(await page.text(), /<script type="module" src="\/ui\/assets\/market.js">/);

  for (const [name, type] of [
    ['market.js', 'text/javascript; charset=utf-8'],
    ['chart.js', 'text/javascript; charset=utf-8'],
    ['market.css', 'text/css; charset=utf-8'],
  ]) {
    const r = await fetch(`${w.node.url}/ui/assets/${name}`);
    t.is(r.status, 200, name);
    t.is(r.headers.get('content-type'), type, name);
    t.is(r.headers.get('cache-control'), 'public, max-age=300', name);
    const etag = r.headers.get('etag')!;
    t.regex(etag, /^"[\w-]+"$/);
    const again = await fetch(`${w.node.url}/ui/assets/${name}`, { headers: { 'if-none-match': etag } });
    t.is(again.status, 304, `${name} revalidates`);
  }
  // Nothing outside the list, whatever the path says.
  for (const path of [
    '/ui/assets/market.html',
    '/ui/assets/..%2Fpackage.json',
    '/ui/assets/..%2F..%2Fsrc%2Fconfig.ts',
    '/ui/assets/%2Fetc%2Fpasswd',
    '/ui/../package.json',
    '/ui/assets/ui.ts',
  ]) {
    const r = await call(w.node.url, 'GET', path);
    t.is(r.status, 404, path);
  }
  const bad = await call(w.node.url, 'GET', '/ui/markets/not-a-market');
  t.is(bad.status, 400);
  t.deepEqual(Object.keys(bad.body).sort(), ['error', 'message']);
  const unknown = await call(w.node.url, 'GET', `/ui/markets/0x${'ab'.repeat(32)}`);
  t.is(unknown.status, 404);
});

test.serial('the page shows the book, then the crossing order: ladder and last trade change', async (t) => {
  const Y = w.market.yes_token_id;
  const N = w.market.no_token_id;
  // A book on both tokens: with mint/merge on, a NO bid at 0.30 is a YES ask at 0.70.
  await place('alice', Y, 'BUY', '0.40', '5');
  await place('alice', Y, 'BUY', '0.41', '3');
  await place('alice', Y, 'BUY', '0.41', '2');
  await place('bob', Y, 'SELL', '0.60', '4');
  await place('bob', Y, 'SELL', '0.65', '7');
  await place('alice', N, 'BUY', '0.30', '6');

  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${(e as Error).message}`));
  page.on('console', (m) => {
    // Without the /ws/market channel the browser logs the failed upgrade; the page polls instead.
    if (m.type() === 'error' && !/WebSocket/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on('requestfailed', (r) => {
    if (!r.url().includes('/ws/')) problems.push(`request failed: ${r.url()}`);
  });
  await page.setViewport({ width: 1200, height: 900 });
  await page.goto(`${w.node.url}/ui/markets/${w.market.condition_id}`, { waitUntil: 'load' });
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });

  t.is(await page.$eval('#question', (e) => e.textContent), w.market.question);
  t.is(await page.$eval('#yes-token', (e) => e.textContent), Y);
  t.is(await page.$eval('#no-token', (e) => e.textContent), N);
  const before = await book(Y);
  t.deepEqual(before.bids, [
    { price: '0.41', size: '5' },
    { price: '0.4', size: '5' },
  ]);
  t.deepEqual(before.asks, [
    { price: '0.6', size: '4' },
    { price: '0.65', size: '7' },
    { price: '0.7', size: '6' },
  ]);
  t.deepEqual(
    await until(
      'the ladder',
      () => ladder(page),
      (v) => same(v, before),
    ),
    before,
    'levels and sizes as GET /v1/book',
  );
  t.deepEqual(await best(page), ['ask:0.6', 'bid:0.41'], 'the best bid and ask are highlighted');
  t.is(await page.$eval('#best-bid', (e) => e.textContent), '0.41');
  t.is(await page.$eval('#best-ask', (e) => e.textContent), '0.6');
  t.is(await page.$eval('#spread', (e) => e.textContent), '0.19');
  t.is((await lastTrade(page)).price, null, 'no trade yet');

  // Bob sells 3 at 0.41: he takes 3 of Alice's 5 at 0.41.
  const taken = await place('bob', Y, 'SELL', '0.41', '3');
  t.is(taken.status, 'matched');
  const after = await book(Y);
  t.deepEqual(after.bids, [
    { price: '0.41', size: '2' },
    { price: '0.4', size: '5' },
  ]);
  t.deepEqual(
    await until(
      'the ladder after the cross',
      () => ladder(page),
      (v) => same(v, after),
      60_000,
    ),
    after,
  );
  const trades = (await call(w.node.url, 'GET', `/v1/market-trades?market=${w.market.condition_id}&limit=5`)).body;
  t.is(trades.length, 1);
  t.like(trades[0], { asset_id: Y, side: 'SELL', price: '0.41', size: '3' });
  t.deepEqual(
    await until(
      'the last trade',
      () => lastTrade(page),
      (v) => v.id === trades[0].id,
      60_000,
    ),
    { price: '0.41', id: trades[0].id },
  );
  const rows = await page.$$eval('#trades tr', (rs) =>
    (rs as HTMLTableRowElement[]).map((r) => ({ id: r.dataset.tradeId, cells: [...r.cells].map((c) => c.textContent) })),
  );
  t.is(rows.length, 1);
  t.is(rows[0].id, trades[0].id);
  t.deepEqual(rows[0].cells.slice(1, 5), ['YES', 'SELL', '0.41', '3']);
  await until(
    'the chart',
    () => page.$$eval('#chart path.line', (p) => p.length),
    (n) => n === 1,
  );

  // The NO view: the same book seen from the other token (and the last trade at 1 − 0.41).
  await page.click('#view-no');
  const no = await book(N);
  t.deepEqual(no.asks[0], { price: '0.59', size: '2' }, 'a YES bid at 0.41 is a NO ask at 0.59');
  t.deepEqual(
    await until(
      'the NO ladder',
      () => ladder(page),
      (v) => same(v, no),
    ),
    no,
  );
  t.is((await lastTrade(page)).price, '0.59');
  await page.click('#view-yes');
  await until(
    'the YES ladder again',
    () => ladder(page),
    (v) => same(v, after),
  );

  // A second cross, at another price, so the chart and the ladder move again.
  await place('alice', Y, 'BUY', '0.60', '1');
  const third = await book(Y);
  t.deepEqual(third.asks[0], { price: '0.6', size: '3' });
  await until(
    'the ladder after the second cross',
    () => ladder(page),
    (v) => same(v, third),
    60_000,
  );
  await until(
    'the last trade at 0.6',
    () => lastTrade(page),
    (v) => v.price === '0.6',
    60_000,
  );
  t.is(
    await page.$eval('#feed-state', (e) => (e as HTMLElement).dataset.state),
    'live',
    'the node serves /ws/market: the page is live over the real channel',
  );

  t.deepEqual(problems, []);

  // For the screenshot: a day of history. A few more trades (each a resting bid and a sell into
  // it, so the book is left as it was), then every trade but the last moved back in time.
  for (const p of ['0.45', '0.5', '0.47', '0.55', '0.52']) {
    await place('alice', Y, 'BUY', p, '1');
    await place('bob', Y, 'SELL', p, '1');
  }
  await place('alice', Y, 'BUY', '0.60', '1');
  const db = w.node.orm.em.getDriver() as unknown as { execute(sql: string, p?: unknown[]): Promise<any[]> };
  const all = await db.execute('select id from trades where market = ? order by match_time, id', [w.market.condition_id]);
  const now = Math.floor(Date.now() / 1000);
  for (const [i, tr] of all.slice(0, -1).entries())
    await db.execute('update trades set match_time = to_timestamp(?) where id = ?', [now - (all.length - 1 - i) * 3 * 3600 + 600, tr.id]);
  await page.click('#intervals button[data-interval="1d"]'); // draws the chart again
  await until(
    'the moved trades',
    () => page.$$eval('#trades tr', (rs) => rs.length),
    (n) => n === all.length,
  );
  await new Promise((r) => setTimeout(r, 500));
  // bench/out/ (git-ignored) on every run; the committed docs/market-page.png only when asked.
  mkdirSync('bench/out', { recursive: true });
  await page.screenshot({
    path: process.env.UPDATE_SCREENSHOT === '1' ? 'docs/market-page.png' : 'bench/out/market-page.png',
    fullPage: true,
  });
  t.deepEqual(problems, []);
  await page.close();
});

test.serial('GET /v1/market-trades: newest first, public fields only, bounded; 400 and 404 at the edge', async (t) => {
  const id = w.market.condition_id;
  const r = await call(w.node.url, 'GET', `/v1/market-trades?market=${id}`);
  t.is(r.status, 200);
  t.is(r.body.length, 8);
  for (const x of r.body) t.deepEqual(Object.keys(x).sort(), ['asset_id', 'id', 'match_time', 'price', 'side', 'size', 'status']);
  t.deepEqual(
    r.body.map((x: any) => x.price),
    ['0.6', '0.52', '0.55', '0.47', '0.5', '0.45', '0.6', '0.41'],
    'newest first',
  );
  t.deepEqual(openapi.checkResponse('get', '/v1/market-trades', 200, r.body), []);
  t.is((await call(w.node.url, 'GET', `/v1/market-trades?market=${id.toUpperCase().replace('0X', '0x')}&limit=1`)).body.length, 1);
  for (const q of [
    '',
    'market=0x12',
    `market=${id}&limit=0`,
    `market=${id}&limit=101`,
    `market=${id}&limit=abc`,
    `market=${id}&market=${id}`,
  ]) {
    const bad = await call(w.node.url, 'GET', `/v1/market-trades?${q}`);
    t.is(bad.status, 400, q);
    t.deepEqual(Object.keys(bad.body).sort(), ['error', 'message'], q);
  }
  const unknown = await call(w.node.url, 'GET', `/v1/market-trades?market=0x${'cd'.repeat(32)}`);
  t.is(unknown.status, 404);
  t.is(unknown.body.error, 'not_found');
});

test.serial(
  'live over the market channel: snapshots and changes applied, resume with last_seq after a gap or a drop, polling meanwhile',
  async (t) => {
    const Y = w.market.yes_token_id;
    const N = w.market.no_token_id;
    const market = w.market.condition_id;
    const ch = await channelStandIn(w.node.port);
    t.teardown(() => ch.close());
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push((e as Error).message));
    await page.goto(`${ch.url}/ui/markets/${market}`, { waitUntil: 'load' });
    await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
    const feedState = () => page.$eval('#feed-state', (e) => (e as HTMLElement).dataset.state);
    const subscribes = (c: WsConn) => c.received.filter((m) => m !== 'PING').map((m) => JSON.parse(m));
    const conn = (i: number) =>
      until(
        `connection ${i + 1}`,
        async () => ch.conns[i],
        (c) => !!c && subscribes(c).length > 0,
      );
    const ts = () => String(Date.now());
    const levels = (bids: [string, string][], asks: [string, string][]) => ({
      bids: bids.map(([price, size]) => ({ price, size })),
      asks: asks.map(([price, size]) => ({ price, size })),
    });
    const snapshot = (c: WsConn, seq: number, yes: ReturnType<typeof levels>, no: ReturnType<typeof levels>) => {
      c.send({ event_type: 'book', market, asset_id: Y, seq, timestamp: ts(), hash: 'x', ...yes });
      c.send({ event_type: 'book', market, asset_id: N, seq, timestamp: ts(), hash: 'x', ...no });
    };
    const change = (c: WsConn, seq: number, changes: [string, 'BUY' | 'SELL', string, string][]) =>
      c.send({
        event_type: 'price_change',
        market,
        seq,
        timestamp: ts(),
        price_changes: changes.map(([asset_id, side, price, size]) => ({ asset_id, side, price, size, best_bid: '', best_ask: '' })),
      });

    // The first connection subscribes to both tokens, without last_seq; the snapshot is applied.
    const c1 = await conn(0);
    t.deepEqual(subscribes(c1), [{ type: 'subscribe', assets_ids: [Y, N] }]);
    const ws1 = levels([['0.3', '1']], [['0.8', '2']]);
    snapshot(c1, 10, ws1, levels([['0.2', '2']], [['0.7', '1']]));
    t.deepEqual(
      await until(
        'the snapshot',
        () => ladder(page),
        (v) => same(v, ws1),
      ),
      ws1,
    );
    t.is(await feedState(), 'live');
    await new Promise((r) => setTimeout(r, 2500)); // past a poll interval: REST (another book) does not overwrite it
    t.deepEqual(await ladder(page), ws1, 'no polling while the socket is open');

    // Changes, level by level; "0" removes a level.
    change(c1, 11, [
      [Y, 'BUY', '0.31', '4'],
      [N, 'SELL', '0.69', '4'],
    ]);
    change(c1, 12, [
      [Y, 'BUY', '0.3', '0'],
      [N, 'SELL', '0.7', '0'],
    ]);
    const ws2 = levels([['0.31', '4']], [['0.8', '2']]);
    t.deepEqual(
      await until(
        'the changes',
        () => ladder(page),
        (v) => same(v, ws2),
      ),
      ws2,
    );
    c1.send({
      event_type: 'last_trade_price',
      market,
      seq: 13,
      timestamp: ts(),
      asset_id: N,
      price: '0.67',
      size: '2',
      side: 'BUY',
      fee_rate_bps: '100',
    });
    t.is(
      (
        await until(
          'the last trade',
          () => lastTrade(page),
          (v) => v.price === '0.33',
        )
      ).price,
      '0.33',
      'a NO trade at 0.67 is YES 0.33',
    );
    await new Promise((r) => setTimeout(r, 800)); // the tape reloaded meanwhile holds only older trades
    t.is((await lastTrade(page)).price, '0.33');

    // A gap (14 missing): the page closes and resumes after 13.
    change(c1, 15, [[Y, 'SELL', '0.9', '9']]);
    const c2 = await conn(1);
    t.deepEqual(subscribes(c2), [{ type: 'subscribe', assets_ids: [Y, N], last_seq: { [market]: 13 } }]);
    t.deepEqual(
      await until(
        'the book as of 13 (the message after the gap not applied)',
        () => ladder(page),
        (v) => same(v, ws2),
      ),
      ws2,
    );
    change(c2, 13, [[Y, 'BUY', '0.5', '5']]); // a repeat of what it has: ignored
    change(c2, 14, [[Y, 'SELL', '0.8', '5']]);
    change(c2, 15, [[Y, 'SELL', '0.75', '1']]);
    const ws3 = levels(
      [['0.31', '4']],
      [
        ['0.75', '1'],
        ['0.8', '5'],
      ],
    );
    t.deepEqual(
      await until(
        'the resumed changes',
        () => ladder(page),
        (v) => same(v, ws3),
      ),
      ws3,
    );

    // The channel goes away: the page polls REST (the node's real book) until it can resubscribe.
    ch.refuse = true;
    c2.drop();
    const rest = await book(Y);
    t.deepEqual(
      await until(
        'the REST book while the socket is closed',
        () => ladder(page),
        (v) => same(v, rest),
      ),
      rest,
    );
    t.is(await feedState(), 'polling');
    ch.refuse = false;
    const c3 = await conn(2);
    t.deepEqual(subscribes(c3), [{ type: 'subscribe', assets_ids: [Y, N], last_seq: { [market]: 15 } }]);
    const ws4 = levels([['0.2', '3']], []);
    snapshot(c3, 40, ws4, levels([], [['0.8', '3']]));
    t.deepEqual(
      await until(
        'the fresh snapshot',
        () => ladder(page),
        (v) => same(v, ws4),
      ),
      ws4,
    );
    t.is(await feedState(), 'live');
    change(c3, 41, [[Y, 'SELL', '0.6', '1']]);
    await until(
      'a change after the fresh snapshot',
      () => ladder(page),
      (v) => same(v, levels([['0.2', '3']], [['0.6', '1']])),
    );
    t.deepEqual(errors, []);
    await page.close();
  },
);
