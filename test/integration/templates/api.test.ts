// Parlay templates and suggestions (issue 7) through the real front door: Kafka, PostgreSQL, the
// local chain, with leg prices made by orders placed through POST /v1/order.
import test from 'ava';
import { Keypair } from '@solana/web3.js';
import { call, token, WEBHOOK_SECRET } from '../../helpers/node.ts';
import { createMarket, order, superuser } from '../../helpers/clob.ts';
import { clobWorld, type ClobWorld } from '../../helpers/clob-world.ts';
import { fixture } from '../../helpers/fixtures.ts';
import { openapi } from '../../../src/http/openapi.ts';

let w: ClobWorld;
let url: string;
const su = () => superuser();
const T = '/api/markets/admin/parlay-templates/';
const addr = () => Keypair.generate().publicKey.toBase58();
const place = (tok: string, o: any) => call(url, 'POST', '/v1/order', { token: tok, body: { order: o, orderType: 'GTC' } });
// Every answer of these routes is checked against its OpenAPI documentation.
const undocumented: string[] = [];
const checked = async (method: string, path: string, opts: Parameters<typeof call>[3] = {}) => {
  const r = await call(url, method, path, opts);
  const route = path.replace(/\/parlay-templates\/[^/]+\/(refresh\/)?$/, (m, refresh) =>
    m.includes('refresh-all') ? m : `/parlay-templates/:pk/${refresh ?? ''}`,
  );
  if (/\/parlay-/.test(path))
    undocumented.push(...openapi.checkResponse(method.toLowerCase(), route, r.status, r.status === 204 ? undefined : r.body));
  return r;
};
const admin = (method: string, path: string, body?: unknown) => checked(method, path, { token: su(), body });
const suggestions = async (etag?: string) => {
  const r = await fetch(`${url}/api/markets/parlay-suggestions/`, { headers: etag ? { 'if-none-match': etag } : {} });
  if (r.status === 200) undocumented.push(...openapi.checkResponse('get', '/api/markets/parlay-suggestions/', 200, await r.clone().json()));
  return r;
};
const quote = (body: unknown) => checked('POST', '/api/markets/parlay-quote/', { body });

// Markets: m1 two-sided book (YES 0.40 / 0.60), m2 one-sided after a trade (YES 0.30 via a NO trade at
// 0.70), m3 reference price only (YES 0.80), m4 no price at all.
let m1: any, m2: any, m3: any, m4: any;
const leg = (m: any, side = 'YES') => ({ condition_id: m.condition_id, selected_outcome: side });

test.before(async () => {
  w = await clobWorld({}, { on_chain_market_id: 101, market_address: addr(), question: 'M1?' });
  url = w.node.url;
  m1 = w.market;
  m2 = await createMarket(url, { question: 'M2?', on_chain_market_id: 102, market_address: addr(), taker_fee_bps: 100 });
  m3 = await createMarket(url, { question: 'M3?', on_chain_market_id: 103, market_address: addr(), reference_price: '0.8' });
  m4 = await createMarket(url, { question: 'M4?', on_chain_market_id: 104, market_address: addr() });
});
test.after.always(async () => {
  await w?.close();
});

test.serial('every admin route needs a superuser Platform JWT: 401 without or with a bad token, 403 for a user', async (t) => {
  const user = token({ sub: 'u1', wallet: null });
  const routes: [string, string][] = [
    ['GET', T],
    ['POST', T],
    ['GET', `${T}1/`],
    ['PATCH', `${T}1/`],
    ['DELETE', `${T}1/`],
    ['POST', `${T}1/refresh/`],
    ['POST', `${T}refresh-all/`],
  ];
  for (const [m, p] of routes) {
    const none = await call(url, m, p, { body: m === 'POST' || m === 'PATCH' ? {} : undefined });
    t.is(none.status, 401, `${m} ${p}`);
    t.is(none.body.error, 'unauthorized');
    t.is((await call(url, m, p, { token: token({ sub: 'x', is_superuser: true }, 'wrong-secret') })).status, 401, `${m} ${p} forged`);
    const forbidden = await call(url, m, p, { token: user, body: m === 'POST' || m === 'PATCH' ? {} : undefined });
    t.is(forbidden.status, 403, `${m} ${p}`);
    t.deepEqual(forbidden.body, { error: 'forbidden', message: 'superuser required' });
  }
});

test.serial('before the program config is mirrored a template is stale (no max_legs, no house edge)', async (t) => {
  const r = await admin('POST', T, { name: 'Early', legs: [leg(m3), leg(m1)] });
  t.is(r.status, 201, JSON.stringify(r.body));
  t.true(r.body.data.stale);
  t.regex(r.body.data.stale_reason, /program config is not mirrored/);
  t.is(r.body.data.payout_per_unit, null);
  t.is(r.body.data.house_edge_bps, null);
  t.is((await admin('DELETE', `${T}${r.body.data.id}/`)).status, 204);
  // The config arrives the way the mirror gets it: a webhook delivery (max_legs 8, edge 200 bps).
  const d = await call(url, 'POST', '/api/parlays/webhooks/indexer/', { auth: WEBHOOK_SECRET, body: fixture('01') });
  t.is(d.status, 200, JSON.stringify(d.body));
});

test.serial('bodies are validated with clear 400s', async (t) => {
  const bad = async (body: unknown, re: RegExp, code = 'invalid_request') => {
    const r = await admin('POST', T, body);
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error, code);
    t.regex(r.body.message, re);
  };
  await bad({ legs: [leg(m1), leg(m2)] }, /name/);
  await bad({ name: 'x', legs: [leg(m1)] }, /legs: a template needs at least 2 legs/);
  await bad({ name: 'x', legs: [leg(m1), leg(m1, 'NO')] }, /legs\.1: the same market appears twice/);
  await bad({ name: 'x', legs: [leg(m1), { ...leg(m2), selected_outcome: 'MAYBE' }] }, /legs\.1/);
  await bad({ name: 'x', legs: [leg(m1), leg(m2)], colour: 'red' }, /colour/);
  await bad(
    { name: 'x', legs: [leg(m1), { demo: true, market_id: 7, question: 'q', selected_outcome: 'YES', probability: '0.5' }] },
    /legs\.1/,
  );
  await bad(
    { name: 'x', legs: [leg(m1), { condition_id: `0x${'e'.repeat(64)}`, selected_outcome: 'YES' }] },
    /not in the market catalog: 0xeee/,
    'unknown_market',
  );
  const twin = await createMarket(url, { question: 'Twin of M1', market_address: m1.market_address });
  await bad({ name: 'x', legs: [leg(m1), leg(twin)] }, /share the market address/, 'duplicate_market');
  const nine = Array.from({ length: 9 }, (_, i) => ({
    demo: true,
    market_id: -(i + 1),
    question: `d${i}`,
    selected_outcome: 'YES',
    probability: '0.9',
  }));
  await bad({ name: 'x', legs: nine }, /9 legs exceed the program's max_legs 8/, 'too_many_legs');
  const malformed = await call(url, 'POST', T, { token: su(), raw: '{"name":' });
  t.is(malformed.status, 400);
  t.is(malformed.body.error, 'malformed_body');
  t.is((await admin('PATCH', `${T}999999/`, { name: 'nobody' })).status, 404);
  t.deepEqual((await admin('GET', T)).body, { data: [] }, 'nothing was stored');
});

test.serial(
  'the book prices legs: midpoint, last trade when one-sided, reference price; product and payout with the house edge',
  async (t) => {
    // m1: Alice bids YES 0.40, Bob offers YES 0.60.
    t.is((await place(w.A, order(w.alice, m1.yes_token_id, 'BUY', '0.40', '10'))).body.status, 'live');
    t.is((await place(w.B, order(w.bob, m1.yes_token_id, 'SELL', '0.60', '10'))).body.status, 'live');
    // m2: Alice bids YES 0.30, Bob's NO bid at 0.70 mints against it; then only a YES bid at 0.25 rests.
    t.is((await place(w.A, order(w.alice, m2.yes_token_id, 'BUY', '0.30', '5'))).body.status, 'live');
    const mint = await place(w.B, order(w.bob, m2.no_token_id, 'BUY', '0.70', '5', { feeRateBps: 100 }));
    t.is(mint.body.status, 'matched', JSON.stringify(mint.body));
    t.is((await place(w.A, order(w.alice, m2.yes_token_id, 'BUY', '0.25', '5'))).body.status, 'live');
    const book2 = await call(url, 'GET', `/v1/markets/${m2.condition_id}`);
    t.like(book2.body, { best_bid: { price: '0.25' }, best_ask: null });

    const r = await admin('POST', T, {
      name: 'Triple',
      description: 'three legs',
      display_order: 2,
      legs: [leg(m1), leg(m2), leg(m3, 'NO')],
    });
    t.is(r.status, 201, JSON.stringify(r.body));
    const d = r.body.data;
    t.like(d, {
      name: 'Triple',
      description: 'three legs',
      display_order: 2,
      is_active: true,
      stale: false,
      stale_reason: null,
      submittable: true,
      house_edge_bps: 200,
    });
    t.deepEqual(
      d.legs.map((l: any) => [l.leg_index, l.market_id, l.selected_outcome, l.probability, l.probability_source, l.demo]),
      [
        [0, 101, 'YES', '0.500000', 'midpoint', false],
        [1, 102, 'YES', '0.300000', 'last_trade', false],
        [2, 103, 'NO', '0.200000', 'reference', false],
      ],
    );
    t.is(d.legs[0].market_address, m1.market_address);
    t.is(d.legs[0].question, 'M1?');
    t.is(d.legs[0].condition_id, m1.condition_id);
    t.is(d.combined_probability, '0.030000000000');
    t.is(d.payout_per_unit, '32.666666'); // 1 × (1 − 0.02) / 0.03, floored to the micro-unit
    t.truthy(d.refreshed_at);
    t.deepEqual((await admin('GET', `${T}${d.id}/`)).body, { data: d });
  },
);

test.serial('refresh reads the book again; refresh-all refreshes every template', async (t) => {
  const [tpl] = (await admin('GET', T)).body.data;
  // A better YES bid on m1: 0.44 / 0.60 → 0.52.
  t.is((await place(w.A, order(w.alice, m1.yes_token_id, 'BUY', '0.44', '10'))).body.status, 'live');
  const r = await admin('POST', `${T}${tpl.id}/refresh/`);
  t.is(r.status, 200);
  t.is(r.body.data.legs[0].probability, '0.520000');
  t.is(r.body.data.combined_probability, '0.031200000000');
  t.is(r.body.data.payout_per_unit, '31.410256');
  t.true(r.body.data.refreshed_at > tpl.refreshed_at);
  // NO on m1 seen through mint/merge: bid 1 − 0.60, ask 1 − 0.44 → 0.48.
  const no = await admin('POST', T, { name: 'NO side', display_order: 1, legs: [leg(m1, 'NO'), leg(m3)] });
  t.is(no.body.data.legs[0].probability, '0.480000');
  t.is(no.body.data.combined_probability, '0.384000000000');
  // Bob improves his offer to 0.56 → 0.50; refresh-all picks it up for both templates.
  t.is((await place(w.B, order(w.bob, m1.yes_token_id, 'SELL', '0.56', '10'))).body.status, 'live');
  const all = await admin('POST', `${T}refresh-all/`);
  t.is(all.status, 200);
  t.is(all.body.refreshed, 2);
  t.is(all.body.stale, 0);
  t.deepEqual(
    all.body.data.map((x: any) => [x.name, x.legs[0].probability]),
    [
      ['NO side', '0.500000'],
      ['Triple', '0.500000'],
    ],
  );
  t.is((await admin('POST', `${T}424242/refresh/`)).status, 404);
});

test.serial('read, list in display order, PATCH (fields and legs), DELETE, and 404s', async (t) => {
  const list = (await admin('GET', T)).body.data;
  t.deepEqual(
    list.map((x: any) => x.display_order),
    [1, 2],
  );
  const id = list[1].id;
  const p = await admin('PATCH', `${T}${id}/`, { name: 'Renamed', display_order: 0 });
  t.is(p.status, 200);
  t.like(p.body.data, { name: 'Renamed', display_order: 0, combined_probability: list[1].combined_probability });
  t.deepEqual(
    (await admin('GET', T)).body.data.map((x: any) => x.id),
    [id, list[0].id],
  );
  const legs = await admin('PATCH', `${T}${id}/`, { legs: [leg(m2, 'NO'), leg(m3)] });
  t.is(legs.status, 200);
  t.deepEqual(
    legs.body.data.legs.map((l: any) => [l.market_id, l.selected_outcome, l.probability]),
    [
      [102, 'NO', '0.700000'],
      [103, 'YES', '0.800000'],
    ],
  );
  t.is(legs.body.data.combined_probability, '0.560000000000');
  const bad = await admin('PATCH', `${T}${id}/`, { legs: [leg(m2), leg(m2)] });
  t.is(bad.status, 400);
  t.regex(bad.body.message, /same market appears twice/);
  t.is((await admin('PATCH', `${T}${id}/`, {})).status, 400);
  t.is((await admin('PATCH', `${T}${id}/`, { is_active: 'yes' })).status, 400);
  for (const p of [`${T}abc/`, `${T}0/`, `${T}999999/`]) t.is((await admin('GET', p)).status, 404, p);
  const extra = await admin('POST', T, { name: 'Temp', legs: [leg(m1), leg(m3)] });
  t.is((await admin('DELETE', `${T}${extra.body.data.id}/`)).status, 204);
  t.is((await admin('DELETE', `${T}${extra.body.data.id}/`)).status, 404);
  t.is((await admin('GET', `${T}${extra.body.data.id}/`)).status, 404);
});

test.serial('suggestions: no auth, active and fresh templates in display order, ETag and 304', async (t) => {
  const r1 = await suggestions();
  t.is(r1.status, 200);
  t.regex(r1.headers.get('content-type') ?? '', /application\/json/);
  const etag = r1.headers.get('etag')!;
  t.truthy(etag);
  const body = await r1.json();
  const names = (await admin('GET', T)).body.data.map((x: any) => x.name);
  t.deepEqual(
    body.data.map((s: any) => s.name),
    names,
  );
  const s = body.data[0];
  t.deepEqual(
    Object.keys(s).sort(),
    [
      'combined_probability',
      'description',
      'display_order',
      'house_edge_bps',
      'id',
      'legs',
      'name',
      'payout_per_unit',
      'refreshed_at',
      'submittable',
    ].sort(),
  );
  t.deepEqual(
    Object.keys(s.legs[0]).sort(),
    ['condition_id', 'demo', 'market_address', 'market_id', 'probability', 'question', 'selected_outcome'].sort(),
  );
  t.like(s.legs[0], {
    market_id: 102,
    market_address: m2.market_address,
    question: 'M2?',
    selected_outcome: 'NO',
    probability: '0.700000',
    demo: false,
  });
  const r304 = await suggestions(etag);
  t.is(r304.status, 304);
  t.is(await r304.text(), '');
  t.is(r304.headers.get('etag'), etag);
  t.is((await suggestions(`W/${etag}`)).status, 304);
  t.is((await suggestions('"other"')).status, 200);
  // An inactive template leaves the suggestions; the ETag changes.
  const id = s.id;
  await admin('PATCH', `${T}${id}/`, { is_active: false });
  const r2 = await suggestions(etag);
  t.is(r2.status, 200);
  t.not(r2.headers.get('etag'), etag);
  t.false((await r2.json()).data.some((x: any) => x.id === id));
  await admin('PATCH', `${T}${id}/`, { is_active: true });
  t.true((await (await suggestions()).json()).data.some((x: any) => x.id === id));
});

test.serial(
  'a leg whose market started, closed or resolved (or has no price) makes the template stale and leaves the suggestions',
  async (t) => {
    const soon = await createMarket(url, {
      question: 'Soon?',
      on_chain_market_id: 105,
      market_address: addr(),
      reference_price: '0.5',
      start_time: new Date(Date.now() + 4000).toISOString(),
    });
    const started = await createMarket(url, {
      question: 'Started?',
      on_chain_market_id: 106,
      market_address: addr(),
      reference_price: '0.5',
      start_time: new Date(Date.now() - 1000).toISOString(),
    });
    const a = (await admin('POST', T, { name: 'Starts soon', display_order: 10, legs: [leg(soon), leg(m3)] })).body.data;
    t.false(a.stale);
    const b = (await admin('POST', T, { name: 'Started', display_order: 11, legs: [leg(started), leg(m3)] })).body.data;
    t.true(b.stale);
    t.is(b.stale_reason, `market ${started.condition_id} has started`);
    t.is(b.combined_probability, '0.400000000000', 'figures are still shown to the admin');
    const c = (await admin('POST', T, { name: 'No price', display_order: 12, legs: [leg(m4), leg(m3)] })).body.data;
    t.true(c.stale);
    t.regex(c.stale_reason, /has no price/);
    t.is(c.legs[0].probability, null);
    t.is(c.combined_probability, null);
    let ids = (await (await suggestions()).json()).data.map((x: any) => x.id);
    t.true(ids.includes(a.id));
    t.false(ids.includes(b.id));
    t.false(ids.includes(c.id));

    // Closing a market in the catalog marks its templates stale at once.
    const closed = await createMarket(url, {
      question: 'Closes?',
      on_chain_market_id: 107,
      market_address: addr(),
      reference_price: '0.5',
    });
    const e = (await admin('POST', T, { name: 'Closes', display_order: 13, legs: [leg(closed), leg(m1)] })).body.data;
    t.true((await (await suggestions()).json()).data.some((x: any) => x.id === e.id));
    t.is((await admin('PATCH', `/api/markets/admin/markets/${closed.condition_id}/`, { status: 'resolved' })).status, 200);
    t.false((await (await suggestions()).json()).data.some((x: any) => x.id === e.id));
    t.like((await admin('GET', `${T}${e.id}/`)).body.data, { stale: true, stale_reason: `market ${closed.condition_id} is resolved` });

    // The start time passes: the read model is rebuilt on the next read, without any refresh.
    await new Promise((r) => setTimeout(r, 4500));
    ids = (await (await suggestions()).json()).data.map((x: any) => x.id);
    t.false(ids.includes(a.id));
    t.like((await admin('GET', `${T}${a.id}/`)).body.data, { stale: true, stale_reason: `market ${soon.condition_id} has started` });
    // A refresh keeps them stale; refresh-all counts them.
    const all = await admin('POST', `${T}refresh-all/`);
    t.is(all.body.stale, 4);
    t.is(all.body.refreshed, all.body.data.length);
    // Reopened and refreshed: fresh again.
    await admin('PATCH', `/api/markets/admin/markets/${closed.condition_id}/`, { status: 'open' });
    t.false((await admin('POST', `${T}${e.id}/refresh/`)).body.data.stale);
    t.true((await (await suggestions()).json()).data.some((x: any) => x.id === e.id));
    for (const x of [a, b, c, e]) await admin('DELETE', `${T}${x.id}/`);
  },
);

test.serial('demo legs: shown with a negative market id and no address, never submittable; the quote refuses them', async (t) => {
  const r = await admin('POST', T, {
    name: 'Demo combo',
    display_order: 20,
    legs: [{ demo: true, market_id: -1, question: 'Will the demo win?', selected_outcome: 'YES', probability: '0.5' }, leg(m3, 'NO')],
  });
  t.is(r.status, 201, JSON.stringify(r.body));
  const d = r.body.data;
  t.like(d.legs[0], {
    demo: true,
    market_id: -1,
    market_address: null,
    condition_id: null,
    question: 'Will the demo win?',
    probability: '0.500000',
    probability_source: 'demo',
  });
  t.is(d.combined_probability, '0.100000000000');
  t.is(d.payout_per_unit, '9.800000');
  t.false(d.submittable);
  t.false(d.stale);
  const sug = (await (await suggestions()).json()).data.find((x: any) => x.id === d.id);
  t.false(sug.submittable);
  t.deepEqual(
    sug.legs.map((l: any) => [l.demo, l.market_id, l.market_address]),
    [
      [true, -1, null],
      [false, 103, m3.market_address],
    ],
  );
  // Anything that would submit it refuses: the quote helper, by template or by legs.
  const q1 = await quote({ template_id: d.id, stake: 10_000_000 });
  t.is(q1.status, 400);
  t.is(q1.body.error, 'demo_leg');
  t.is(q1.body.message, 'leg 0 is a demo leg (market -1): demo legs are for display only and cannot be submitted');
  const q2 = await quote({
    legs: [leg(m3), { demo: true, market_id: -4, question: 'q', selected_outcome: 'NO', probability: '0.2' }],
    stake: '10000000',
  });
  t.is(q2.status, 400);
  t.is(q2.body.error, 'demo_leg');
  t.regex(q2.body.message, /leg 1 is a demo leg \(market -4\)/);
});

test.serial('the quote prices real legs from the book as create_parlay would', async (t) => {
  const q = await quote({ legs: [leg(m1), leg(m3, 'NO')], stake: 10_000_000 });
  t.is(q.status, 200, JSON.stringify(q.body));
  t.deepEqual(q.body.data, {
    legs: [
      {
        market_id: 101,
        market_address: m1.market_address,
        condition_id: m1.condition_id,
        selected_outcome: 'YES',
        probability: '0.500000',
        probability_source: 'midpoint',
      },
      {
        market_id: 103,
        market_address: m3.market_address,
        condition_id: m3.condition_id,
        selected_outcome: 'NO',
        probability: '0.200000',
        probability_source: 'reference',
      },
    ],
    stake: 10_000_000,
    combined_probability: '0.100000000000',
    potential_payout: 98_000_000,
    house_edge_bps: 200,
  });
  const noAddr = await createMarket(url, { reference_price: '0.5' });
  const cases: [unknown, number, string][] = [
    [{ legs: [leg(m1), leg(noAddr)], stake: 10_000_000 }, 400, 'not_on_chain'],
    [{ legs: [leg(m1), leg(m4)], stake: 10_000_000 }, 400, 'no_price'],
    [{ legs: [leg(m1), leg(m3)], stake: 1 }, 400, 'stake_out_of_range'],
    [{ legs: [leg(m1), leg(m1)], stake: 10_000_000 }, 400, 'duplicate_market'],
    [{ template_id: 999999, stake: 10_000_000 }, 404, 'not_found'],
    [{ stake: 10_000_000 }, 400, 'invalid_request'],
  ];
  for (const [body, status, code] of cases) {
    const r = await quote(body);
    t.is(r.status, status, JSON.stringify(body));
    t.is(r.body.error, code, JSON.stringify(r.body));
  }
});

test.serial('the answers match the OpenAPI document, which lists every template route', async (t) => {
  t.deepEqual(undocumented, []);
  const doc: any = await (await fetch(`${url}/openapi.json`)).json();
  for (const [p, m] of [
    [T, 'get'],
    [T, 'post'],
    [`${T}{pk}/`, 'get'],
    [`${T}{pk}/`, 'patch'],
    [`${T}{pk}/`, 'delete'],
    [`${T}{pk}/refresh/`, 'post'],
    [`${T}refresh-all/`, 'post'],
    ['/api/markets/parlay-suggestions/', 'get'],
    ['/api/markets/parlay-quote/', 'post'],
  ]) {
    t.truthy(doc.paths[p]?.[m], `${m} ${p}`);
  }
  t.truthy(doc.components.schemas.ParlayTemplate);
  t.truthy(doc.components.schemas.ParlaySuggestion);
});
