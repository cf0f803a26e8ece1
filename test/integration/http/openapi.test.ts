// The OpenAPI document: every route registered on the node's Koa routers is documented (and
// nothing documented is missing from them), /openapi.json and /docs serve it, and the answers of
// real calls to every documented operation (through the typed client, on Kafka, PostgreSQL and the
// local chain) match their documented schemas.
import test from 'ava';
import { Keypair } from '@solana/web3.js';
import { clobWorld, type ClobWorld } from '../../helpers/clob-world.ts';
import { token, WEBHOOK_SECRET, INTERNAL_TOKEN } from '../../helpers/node.ts';
import { rawTx, parlayCreated } from '../../helpers/events.ts';
import { openapi, openApiPath, routersOf, routesOf, undocumented } from '../../../src/http/openapi.ts';
import { ClobClient, ParlayClient, type ResponseInfo } from '../../../src/client/index.ts';

let w: ClobWorld;
test.before(async () => {
  w = await clobWorld();
});
test.after.always(async () => {
  await w?.close();
});

test('every route on the routers is documented, and every documented operation is routed', (t) => {
  const routers = routersOf(w.node.app);
  t.true(routers.length >= 5, 'the node mounts its routers');
  const missing = undocumented(routers);
  t.deepEqual(
    missing,
    [],
    `undocumented routes: ${missing.map((r) => `${r.method.toUpperCase()} ${r.path}`).join(', ')} — declare them with documentRoutes() (src/http/openapi.ts)`,
  );
  const bare = (p: string) => openApiPath(p).replace(/(.)\/$/, '$1');
  const routed = new Set(routesOf(routers).map((r) => `${r.method} ${bare(r.path)}`));
  const stale = openapi.operations().filter((o) => !routed.has(`${o.method} ${bare(o.path)}`));
  t.deepEqual(
    stale.map((o) => `${o.method} ${o.path}`),
    [],
    'documented but not routed',
  );
});

test('/openapi.json is an OpenAPI 3.1 document of both areas whose references resolve; /docs renders it', async (t) => {
  const r = await fetch(`${w.node.url}/openapi.json`);
  t.is(r.status, 200);
  const doc: any = await r.json();
  t.is(doc.openapi, '3.1.0');
  const paths = Object.keys(doc.paths);
  t.true(
    paths.some((p) => p.startsWith('/api/parlays/')) &&
      paths.some((p) => p.startsWith('/v1/')) &&
      paths.some((p) => p.startsWith('/api/markets/')),
  );
  for (const route of routesOf(routersOf(w.node.app))) {
    const op = openapi.find(route.method, route.path);
    t.truthy(op && doc.paths[openApiPath(op.path)]?.[route.method], `${route.method} ${route.path}`);
  }
  const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]);
  t.true(refs.length > 10);
  for (const ref of refs) t.truthy(doc.components.schemas[ref], `$ref ${ref} resolves`);
  // The request schemas are the validating ones: the order body, the trade filters, the sign-in.
  const order = doc.paths['/v1/order'].post.requestBody.content['application/json'].schema;
  t.deepEqual(order.properties.orderType.enum, ['GTC', 'FOK', 'GTD']);
  t.is(order.properties.order.additionalProperties, false);
  const limit = doc.paths['/v1/trades'].get.parameters.find((p: any) => p.name === 'limit');
  t.is(limit.schema.maximum, 500);
  t.is(limit.schema.default, 100);
  t.deepEqual(doc.paths['/v1/orders/cancel'].post.security, [{ clob: [] }]);
  t.deepEqual(doc.paths['/v1/orders/size-update'].post.security, [{ internal: [] }]);
  // SPEC 2.3: the vault's updated_at is a timestamp, never null (before the first event: when the mirror was created).
  const vault = doc.components.schemas.Vault;
  t.is(vault.properties.updated_at.type, 'string', JSON.stringify(vault.properties.updated_at));
  t.true(vault.required.includes('updated_at'));

  const page = await fetch(`${w.node.url}/docs`);
  t.is(page.status, 200);
  t.regex(page.headers.get('content-type') ?? '', /text\/html/);
  const html = await page.text();
  t.notRegex(html, /<script/i, 'self-contained, no scripts');
  for (const p of paths) t.true(html.includes(p.replace(/&/g, '&amp;')), `the page lists ${p}`);
});

test('answers of real calls to every documented operation match their documented schemas', async (t) => {
  const problems: string[] = [];
  const seen = new Set<string>();
  const check = (r: ResponseInfo) => {
    seen.add(`${r.method} ${openApiPath(r.route)}`);
    problems.push(...openapi.checkResponse(r.method, r.route, r.status, r.body));
  };
  const base = { urls: w.node.url, onResponse: check };
  const alice = new ClobClient({ ...base, wallet: w.alice, internalToken: INTERNAL_TOKEN });
  const bob = new ClobClient({ ...base, wallet: w.bob });
  t.teardown(() => {
    alice.close();
    bob.close();
  });
  const user = Keypair.generate().publicKey;
  const admin = new ParlayClient({ ...base, token: token({ sub: 'root', is_superuser: true }) });
  const me = new ParlayClient({ ...base, token: token({ sub: 'u-1', wallet: user.toBase58() }) });
  const m = w.market;

  // Operations and docs, fetched directly.
  for (const path of ['/healthz', '/readyz', '/metrics', '/openapi.json', '/docs']) {
    const r = await fetch(w.node.url + path);
    const text = await r.text();
    check({
      method: 'get',
      route: path,
      url: path,
      status: r.status,
      body: (r.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text,
    });
  }

  // Market catalog.
  await alice.markets();
  await admin.markets('open');
  await admin.adminMarkets();
  const created = await admin.createMarket({
    condition_id: `0x${'ab'.repeat(32)}`,
    yes_token_id: Keypair.generate().publicKey.toBase58(),
    no_token_id: Keypair.generate().publicKey.toBase58(),
    question: 'Docs?',
  });
  t.is(created.question, 'Docs?');
  await admin.patchMarket(created.condition_id, { question: 'Documented?', tick_size: '0.001' });
  t.is((await admin.adminMarket(created.condition_id))?.question, 'Documented?');
  t.is(await admin.adminMarket(`0x${'cd'.repeat(32)}`), null);

  // Order book: config, market, sign-in, orders, a trade, reads, cancels, size-update, the stream.
  const cfg = await alice.config();
  t.is(cfg.taker_fee_curve, 'min(p,1-p)');
  await alice.signIn();
  const a1 = await alice.postOrder({ tokenId: m.yes_token_id, side: 'BUY', price: '0.40', size: '5' });
  const a2 = await alice.postOrder({ tokenId: m.yes_token_id, side: 'BUY', price: '0.41', size: '5' });
  const a3 = await alice.postOrder({ tokenId: m.no_token_id, side: 'BUY', price: '0.20', size: '5' });
  const a4 = await alice.postOrder({ tokenId: m.no_token_id, side: 'BUY', price: '0.21', size: '5' });
  t.is(a1.status, 'live');
  const taken = await bob.postOrder({ tokenId: m.yes_token_id, side: 'SELL', price: '0.40', size: '7', feeRateBps: m.taker_fee_bps });
  t.is(taken.status, 'matched');
  await t.throwsAsync(bob.postOrder({ tokenId: m.yes_token_id, side: 'BUY', price: '0.405', size: '5' }), { message: /INVALID_TICK_SIZE/ });
  const market = await bob.market(m.condition_id);
  t.is(market?.last_price, '0.4');
  t.is(await bob.market(`0x${'ee'.repeat(32)}`), null);
  t.true((await alice.orders({ market: m.condition_id })).length >= 3);
  t.true((await alice.ordersValueRange('0.5')).length >= 1);
  t.truthy(await alice.order(a3.orderID));
  t.is(await alice.order(a2.orderID), null, 'a fully matched order is gone from the book');
  t.true((await alice.openOrders({ market: m.condition_id })).length >= 4);
  t.is((await alice.openOrder(a2.orderID))?.status, 'MATCHED');
  t.is(await alice.openOrder(`0x${'00'.repeat(32)}`), null);
  const trades = await bob.trades({ market: m.condition_id, limit: 10 });
  t.is(trades.length, 1);
  t.is(trades[0].maker_orders.length, 2);
  t.truthy(await bob.lastTrade(m.condition_id));
  t.is(await bob.lastTrade(created.condition_id), null);
  const c1 = await alice.cancel(a3.orderID);
  t.deepEqual(c1.canceled, [a3.orderID]);
  const c2 = await alice.cancelBatch([a3.orderID, a4.orderID, `0x${'11'.repeat(32)}`]);
  t.deepEqual(c2.canceled, [a4.orderID]);
  t.is(Object.keys(c2.not_canceled).length, 2);
  await alice.cancelMarket(m.condition_id, m.yes_token_id);
  await alice.cancelAll();
  const su = await alice.sizeUpdate({ trade_id: 'docs-1', orders: [a1.orderID] });
  t.deepEqual(su.not_found.concat(su.invalidated).length, 1);
  const stream = await fetch(`${w.node.url}/v1/stream?market=${m.condition_id}&from=beginning`, {
    headers: { authorization: `Bearer ${await bob.bearer()}` },
    signal: AbortSignal.timeout(2000),
  });
  t.is(stream.status, 200);
  t.regex(stream.headers.get('content-type') ?? '', /text\/event-stream/);
  await stream.body?.cancel();
  seen.add('get /v1/stream');

  // Heartbeats and the market makers' area (served only with same-side matching off: 404 here).
  t.is((await bob.heartbeat()).enabled, true);
  await bob.heartbeatStatus();
  t.is((await bob.heartbeat(false)).enabled, false);
  await t.throwsAsync(alice.mint(m.condition_id, 1_000_000n), { message: /404/ });
  await t.throwsAsync(alice.merge(m.condition_id, '1000000'), { message: /404/ });

  // Parlay side: a webhook delivery, the user's parlays, the vault, the admin routes.
  const d = await me.deliverWebhook([rawTx(`docs-${Date.now()}`, 500, [parlayCreated(77, user, 500)])], WEBHOOK_SECRET);
  t.is(d.status, 200, JSON.stringify(d.body));
  const mine = await me.userParlays();
  t.is(mine.length, 1);
  t.is(mine[0].legs.length, 3);
  t.is((await me.parlay(77))?.parlay_id, 77);
  t.is(await me.parlay(78), null);
  await me.userParlays('active');
  await me.vault();
  t.is((await admin.patchVault({ max_legs: 6 })).max_legs, 6);
  await admin.syncVault().catch(() => undefined); // the mirror has no vault address on this chain: an error answer, checked all the same
  t.is((await admin.adminParlays({ page: 1 })).count, 1);
  await admin.voidParlay(77).catch(() => undefined); // not on this chain: an error answer
  t.is((await me.deliverWebhook({ nope: true }, WEBHOOK_SECRET)).status, 400);

  // Parlay templates and suggestions (issue 7), through the client as well.
  const tmpl = await admin
    .createTemplate({
      name: 'Docs combo',
      legs: [
        { condition_id: m.condition_id, selected_outcome: 'YES' },
        { demo: true, market_id: -1, question: 'Demo?', selected_outcome: 'NO', probability: '0.4' },
      ],
    })
    .catch((e) => {
      t.log(`template create: ${e.message}`);
      return null;
    });
  const pk = tmpl?.id ?? 1;
  await admin.templates();
  await admin.template(pk);
  await admin.patchTemplate(pk, { description: 'documented' }).catch(() => undefined);
  await admin.refreshTemplate(pk).catch(() => undefined);
  await admin.refreshAllTemplates();
  const sug = await me.suggestions();
  if (sug.etag) t.true((await me.suggestions(sug.etag)).notModified);
  await me
    .quote({
      legs: [
        { condition_id: m.condition_id, selected_outcome: 'YES' },
        { condition_id: created.condition_id, selected_outcome: 'NO' },
      ],
      stake: 1_000_000,
    })
    .catch(() => undefined);
  await admin.deleteTemplate(pk);
  t.false(await admin.deleteTemplate(pk));

  // Operations declared by other modules that this test does not drive: their GETs are probed
  // (with the right credentials, placeholder path parameters), the rest listed.
  const creds: Record<string, string | undefined> = {
    clob: `Bearer ${await bob.bearer()}`,
    platform: `Bearer ${token({ sub: 'u-1', wallet: user.toBase58() })}`,
    superuser: `Bearer ${token({ sub: 'root', is_superuser: true })}`,
    internal: undefined,
    webhook: WEBHOOK_SECRET,
  };
  const notDriven: string[] = [];
  for (const op of openapi.operations()) {
    if (seen.has(`${op.method} ${openApiPath(op.path)}`)) continue;
    if (op.method !== 'get') {
      notDriven.push(`${op.method.toUpperCase()} ${op.path}`);
      continue;
    }
    const path = op.path.replace(/:([A-Za-z0-9_]+)/g, '1');
    const auth = op.security ? creds[op.security] : undefined;
    const r = await fetch(w.node.url + path, {
      headers: auth ? (op.security === 'internal' ? { 'x-internal-token': INTERNAL_TOKEN } : { authorization: auth }) : {},
    });
    const text = await r.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    check({ method: 'get', route: op.path, url: path, status: r.status, body });
  }
  if (notDriven.length) t.log(`not driven here (their own tests call them): ${notDriven.join(', ')}`);

  t.deepEqual(problems, [], problems.join('\n'));
});
