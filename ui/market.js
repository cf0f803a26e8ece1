// The market page: the market, a depth ladder of the YES (or NO) view, recent trades and a price
// chart. Live over the `market` WebSocket channel when the node serves it (feed.js); while the
// socket is not open (or has not delivered a book yet), the REST reads are polled every 2 s
// (POST /v1/books, GET /v1/market-trades), so the page works with or without the channel. Every value goes into the page as text.
import { Book, micro, decimal } from './book.js';
import { MarketFeed } from './feed.js';
import { drawChart } from './chart.js';

const POLL_MS = 2000;
/** How late after its trade's second a last_trade_price message may be stamped (see applyTrades). */
const TOLD_SLACK_MS = 5_000;
const LEVELS = 15;
const TRADES = 20;
const WINDOW = { '1h': 3600, '6h': 21_600, '1d': 86_400, '1w': 604_800 };

const $ = (id) => document.getElementById(id);
const conditionId = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop() ?? '').toLowerCase();

const state = {
  market: null,
  view: 'yes',
  // Two copies of both tokens' books: as the channel built them (snapshots + changes, kept across
  // a reconnect so that a resume from last_seq continues them) and as the REST reads last gave
  // them. The channel's are shown while the socket is open and has delivered a book.
  wsBooks: new Map(),
  restBooks: new Map(),
  wsReady: false,
  trades: [],
  last: null, // { asset_id, price, size, side, time (ms), id? }
  live: false, // the socket is open
  interval: '1d',
};

async function getJson(path, init = {}) {
  const r = await fetch(path, { ...init, headers: { accept: 'application/json', ...(init.headers ?? {}) } });
  const body = await r.json().catch(() => null);
  if (!r.ok) throw new Error(`${path.split('?')[0]}: ${r.status} ${body?.message ?? ''}`.trim());
  return body;
}

const token = () => (state.view === 'yes' ? state.market.yes_token_id : state.market.no_token_id);
const outcomeOf = (asset) => (asset === state.market.yes_token_id ? 'YES' : asset === state.market.no_token_id ? 'NO' : '?');
/** A price of `asset` in the terms of the token shown (the other token's q is 1 − q). */
const inView = (asset, price) => (asset === token() ? price : decimal(1e6 - micro(price)));

function showError(e) {
  const p = $('error');
  if (!e) {
    p.hidden = true;
    return;
  }
  p.hidden = false;
  p.textContent = e instanceof Error ? e.message : String(e);
}

function cell(text, cls) {
  const td = document.createElement('td');
  td.textContent = text;
  if (cls) td.className = cls;
  return td;
}

function ladderRows(levels, side, max) {
  let total = 0;
  const rows = levels.map((l, i) => {
    total += micro(l.size);
    const tr = document.createElement('tr');
    tr.className = `level ${side}${i === 0 ? ' best' : ''}`;
    tr.dataset.side = side;
    tr.dataset.price = l.price;
    tr.dataset.size = l.size;
    const depth = cell(decimal(total), 'num total');
    const bar = document.createElement('span');
    bar.className = 'bar';
    bar.style.setProperty('width', `${max ? Math.round((total / max) * 100) : 0}%`);
    depth.prepend(bar);
    tr.append(cell(l.price, 'num price'), cell(l.size, 'num'), depth);
    return tr;
  });
  return rows;
}

const fromChannel = () => state.live && state.wsReady;

function renderBook() {
  const book = (fromChannel() ? state.wsBooks : state.restBooks).get(token());
  const { bids, asks } = book ? book.view() : { bids: [], asks: [] };
  const b = bids.slice(0, LEVELS);
  const a = asks.slice(0, LEVELS);
  const sum = (ls) => ls.reduce((s, l) => s + micro(l.size), 0);
  const max = Math.max(sum(a), sum(b));
  $('asks').replaceChildren(...ladderRows(a, 'ask', max).reverse()); // best ask next to the spread
  $('bids').replaceChildren(...ladderRows(b, 'bid', max));
  const bid = b[0]?.price;
  const ask = a[0]?.price;
  $('best-bid').textContent = bid ?? '–';
  $('best-ask').textContent = ask ?? '–';
  const mid = bid && ask ? decimal(Math.round((micro(bid) + micro(ask)) / 2)) : null;
  const spread = bid && ask ? decimal(micro(ask) - micro(bid)) : null;
  $('mid').textContent = mid ?? '–';
  $('spread').textContent = spread ?? '–';
  $('spread-line').textContent = spread ? `spread ${spread}` : a.length || b.length ? 'one-sided book' : 'empty book';
}

function renderTrades() {
  const rows = state.trades.map((t) => {
    const tr = document.createElement('tr');
    tr.dataset.tradeId = t.id;
    tr.className = t.side === 'BUY' ? 'buy' : 'sell';
    const d = new Date(Number(t.match_time) * 1000);
    const day = d.toDateString() === new Date().toDateString() ? '' : `${d.getMonth() + 1}/${d.getDate()} `;
    tr.append(
      cell(day + d.toLocaleTimeString([], { hour12: false })),
      cell(outcomeOf(t.asset_id)),
      cell(t.side, 'side'),
      cell(t.price, 'num'),
      cell(t.size, 'num'),
      cell(t.status.toLowerCase(), 'status'),
    );
    return tr;
  });
  if (!rows.length) {
    const tr = document.createElement('tr');
    tr.className = 'empty';
    const td = cell('No trades yet');
    td.colSpan = 6;
    tr.append(td);
    rows.push(tr);
  }
  $('trades').replaceChildren(...rows);
}

function renderLast() {
  const el = $('last-trade');
  const l = state.last;
  if (!l) {
    el.textContent = '–';
    delete el.dataset.price;
    return;
  }
  const price = inView(l.asset_id, l.price);
  el.dataset.price = price;
  if (l.id) el.dataset.tradeId = l.id;
  else delete el.dataset.tradeId;
  const small = document.createElement('small');
  small.textContent = ` ${outcomeOf(l.asset_id)} ${l.side} ${l.size}`;
  el.replaceChildren(document.createTextNode(price), small);
}

function renderFeed(why) {
  $('feed-state').dataset.state = fromChannel() ? 'live' : 'polling';
  $('feed-text').textContent = fromChannel() ? 'live (WebSocket)' : `polling every ${POLL_MS / 1000} s${why ? ` — socket: ${why}` : ''}`;
}

let frame = false;
function render() {
  if (frame) return;
  frame = true;
  requestAnimationFrame(() => {
    frame = false;
    renderBook();
    renderLast();
    renderTrades();
  });
}

function applyTrades(trades) {
  const newest = trades[0];
  const changed = newest?.id !== state.trades[0]?.id;
  state.trades = trades;
  // The newer of the tape's newest trade and a last_trade_price message (the tape has seconds). The
  // message is stamped when the channel sent it, which may be in the second after the trade's own:
  // the tape's newest trade with the message's asset, side, price and size, a few seconds at most
  // before it, is the trade the message told of (it brings the trade's id).
  const at = newest ? Number(newest.match_time) * 1000 : 0;
  const l = state.last;
  const told =
    !!newest &&
    !!l &&
    !l.id &&
    newest.asset_id === l.asset_id &&
    newest.side === l.side &&
    Number(newest.price) === Number(l.price) &&
    Number(newest.size) === Number(l.size) &&
    at + 999 + TOLD_SLACK_MS >= (l.time ?? 0);
  if (newest && (!l || l.id === newest.id || told || at + 999 >= (l.time ?? 0))) {
    state.last = { asset_id: newest.asset_id, price: newest.price, size: newest.size, side: newest.side, time: at, id: newest.id };
  }
  if (changed) void loadChart();
}

async function loadTrades() {
  applyTrades(await getJson(`/v1/market-trades?market=${conditionId}&limit=${TRADES}`));
  render();
}

let tradesTimer = null;
const soonTrades = () => {
  clearTimeout(tradesTimer);
  tradesTimer = setTimeout(() => loadTrades().catch(showError), 300);
};

/** One REST refresh: both tokens' books (one request, one consistent state) and the trades. */
async function poll() {
  const m = state.market;
  const [books, trades] = await Promise.all([
    getJson('/v1/books', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ token_id: m.yes_token_id }, { token_id: m.no_token_id }]),
    }),
    getJson(`/v1/market-trades?market=${conditionId}&limit=${TRADES}`),
  ]);
  for (const b of books) state.restBooks.get(b.asset_id)?.snapshot(b.bids, b.asks);
  if (!trades.length && !state.last && books[0]?.last_trade_price)
    state.last = { asset_id: books[0].asset_id, price: books[0].last_trade_price, size: '', side: '', time: null };
  applyTrades(trades);
  render();
}

async function pollLoop() {
  if (!fromChannel()) {
    try {
      await poll();
      showError(null);
    } catch (e) {
      showError(e);
    }
  }
  setTimeout(pollLoop, POLL_MS);
}

function onMessage(m) {
  switch (m.event_type) {
    case 'book':
      state.wsBooks.get(m.asset_id)?.snapshot(m.bids ?? [], m.asks ?? []);
      if (!state.wsReady) {
        state.wsReady = true;
        renderFeed();
      }
      break;
    case 'price_change':
      for (const c of m.price_changes ?? []) state.wsBooks.get(c.asset_id)?.change(c.side, c.price, c.size);
      break;
    case 'last_trade_price':
      state.last = { asset_id: m.asset_id, price: m.price, size: m.size, side: m.side, time: Number(m.timestamp) };
      soonTrades();
      break;
    case 'error':
      showError(`channel: ${m.message}`);
      return;
    default:
      return;
  }
  render();
}

let chartSeq = 0;
async function loadChart() {
  const mine = ++chartSeq;
  const interval = state.interval;
  const now = Math.floor(Date.now() / 1000);
  try {
    const { history } = await getJson(`/v1/prices-history?market=${token()}&interval=${interval}`);
    if (mine !== chartSeq) return;
    const start = interval === 'max' ? (history[0]?.t ?? now - 3600) : now - WINDOW[interval];
    drawChart($('chart'), history, start, now);
  } catch (e) {
    showError(e);
  }
}

function setView(view) {
  state.view = view;
  $('view-yes').setAttribute('aria-pressed', String(view === 'yes'));
  $('view-no').setAttribute('aria-pressed', String(view === 'no'));
  $('chart-token').textContent = view.toUpperCase();
  render();
  void loadChart();
}

async function main() {
  state.market = await getJson(`/v1/markets/${conditionId}`);
  const m = state.market;
  document.title = `${m.question || m.condition_id} · market`;
  $('question').textContent = m.question || '(no question)';
  $('condition-id').textContent = m.condition_id;
  $('status').textContent = m.status;
  $('status').dataset.status = m.status;
  $('yes-token').textContent = m.yes_token_id;
  $('no-token').textContent = m.no_token_id;
  for (const books of [state.wsBooks, state.restBooks]) {
    books.set(m.yes_token_id, new Book());
    books.set(m.no_token_id, new Book());
  }

  $('view-yes').addEventListener('click', () => setView('yes'));
  $('view-no').addEventListener('click', () => setView('no'));
  for (const b of $('intervals').querySelectorAll('button')) {
    b.addEventListener('click', () => {
      state.interval = b.dataset.interval;
      for (const o of $('intervals').querySelectorAll('button')) o.setAttribute('aria-pressed', String(o === b));
      void loadChart();
    });
  }

  renderFeed();
  await pollLoop();
  void loadChart();
  setInterval(loadChart, 30_000);
  new MarketFeed({
    market: m.condition_id,
    assets: [m.yes_token_id, m.no_token_id],
    onMessage,
    onState: (open, why) => {
      state.live = open;
      renderFeed(why);
      render();
      if (!open) void poll().catch(showError);
    },
  }).start();
  document.body.dataset.ready = 'true';
}

main().catch((e) => {
  showError(e);
  $('question').textContent = 'Market unavailable';
});
