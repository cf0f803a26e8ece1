// A book that may have had an order it no longer knows has the front door read the ledger
// (CHECK_LEDGER): an order posted before is still refused (DUPLICATE_ORDER), new ones are placed, on
// both transports. Two ways a book gets there, each made here while its node is down:
// - it no longer remembers every order it was given (BookState.complete lost, as from a snapshot
//   of an earlier version): every unknown order of its market is read for a while;
// - its memory of finished orders let the order go into its let-go filter (as after 10,000
//   finished orders): that order is read, and new orders still go without a read.
// Without the read, the forgotten order would be placed a second time.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { startLocalChain } from '../../../src/chain/local/index.ts';
import { Web3Gateway } from '../../../src/chain/gateway.ts';
import { addLetGo, emptyLetGo, letGoOut } from '../../../actors/market-book/let-go.ts';
import { testNode, call, KAFKA_BROKERS } from '../../helpers/node.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { bearer, createMarket, order } from '../../helpers/clob.ts';
import { fundedPair, OutcomeTokens } from '../../helpers/chain-market.ts';
import { Keypair } from '@solana/web3.js';
import pg from 'pg';

for (const transport of ['in-process bus', 'Kafka'] as const)
  for (const how of ['forgets', 'let go'] as const)
    test.serial(
      `${transport}: a book that ${how === 'forgets' ? 'no longer remembers every order' : 'let an order go into its filter'} has the front door read the ledger`,
      async (t) => {
        const chain = await startLocalChain();
        const boot = await chain.bootstrap();
        const db = await freshDatabase();
        const env = {
          DATABASE_URL: db.url,
          ...(transport === 'Kafka' ? { KAFKA_BROKERS } : {}),
          TOPIC_PREFIX: `t${randomBytes(4).toString('hex')}.`,
          NODE_ID: `n${randomBytes(3).toString('hex')}`,
          CLOB_COLLATERAL_MINT: boot.collateralMint.toBase58(),
          CLOB_DELEGATE: Keypair.generate().publicKey.toBase58(),
        };
        const start = () => testNode(env, { chain: new Web3Gateway(chain.url, boot.authority) });
        let node = await start();
        let up = true;
        t.teardown(async () => {
          if (up) await node.close();
          await chain.close();
          await db.drop();
        });
        const tokens = await new OutcomeTokens(chain).create();
        const market = await createMarket(node.url, {
          yes_token_id: tokens.yes.publicKey.toBase58(),
          no_token_id: tokens.no.publicKey.toBase58(),
          min_size: '1',
        });
        const [alice] = await fundedPair(chain, tokens);
        const YES = market.yes_token_id as string;
        const NO = market.no_token_id as string;
        const A = await bearer(node.url, alice); // (a signed-in token outlives the node)
        const post = async (o: unknown) => {
          const r = await call(node.url, 'POST', '/v1/order', { token: A, body: { order: o, orderType: 'GTC' } });
          return r.status === 200 ? r.body.status : r.body.code;
        };
        const reads = async () => {
          const text = (await call(node.url, 'GET', '/metrics')).body as string;
          const n = (why: string) =>
            Number(new RegExp(`^clob_order_ledger_reads_total\\{[^}]*why="${why}"[^}]*\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
          return { before_ask: n('before_ask'), book_forgets: n('book_forgets'), book_filter: n('book_filter') };
        };

        const first = order(alice, YES, 'BUY', '0.30', '5');
        t.is(await post(first), 'live');
        t.is((await call(node.url, 'POST', '/v1/orders/cancel-all', { token: A })).status, 200);
        t.is(await post(first), 'DUPLICATE_ORDER', 'remembered by its book');

        // Down, the book's snapshot forgets the order: it no longer says it remembers every order, or
        // it holds the order in its let-go filter instead of its finished orders.
        await node.close();
        up = false;
        const c = new pg.Client({ connectionString: db.url });
        await c.connect();
        try {
          const where = `kind = 'market-book' and key = $1 and state->'complete' = 'true'::jsonb and jsonb_array_length(state->'finished') = 1`;
          const r =
            how === 'forgets'
              ? await c.query(`update actor_snapshots set state = (state - 'complete') || '{"finished": []}'::jsonb where ${where}`, [
                  market.condition_id,
                ])
              : await c.query(
                  `update actor_snapshots set state = state || jsonb_build_object('finished', '[]'::jsonb, 'letGo', $2::jsonb) where ${where}`,
                  [market.condition_id, JSON.stringify(await filterOf(c, market.condition_id))],
                );
          t.is(r.rowCount, 1, 'the book was saved on the way down, remembering every order and the one finished');
        } finally {
          await c.end();
        }
        node = await start();
        up = true;

        t.is(await post(order(alice, YES, 'BUY', '0.31', '5')), 'live', 'the token market read with the order');
        const r0 = await reads();
        t.deepEqual(r0, { before_ask: 1, book_forgets: 0, book_filter: 0 });
        // The market in memory: the order goes without a ledger read, the book asks for one.
        t.is(await post(first), 'DUPLICATE_ORDER', 'forgotten by its book, refused on the ledger');
        t.deepEqual(await reads(), how === 'forgets' ? { ...r0, book_forgets: 1 } : { ...r0, book_filter: 1 });
        if (how === 'forgets') {
          t.is(await post(order(alice, YES, 'BUY', '0.32', '5')), 'live', 'read first for this token a while');
          t.is((await reads()).before_ask, 2);
          t.is(await post(order(alice, NO, 'BUY', '0.20', '5')), 'live');
          t.is(await post(order(alice, NO, 'BUY', '0.21', '5')), 'live', 'asked to read, read, asked again');
        } else {
          t.is(await post(order(alice, YES, 'BUY', '0.32', '5')), 'live');
          t.deepEqual(await reads(), { ...r0, book_filter: 1 }, 'a new order: no ledger read (a filter hit is about one order)');
          t.is(await post(order(alice, NO, 'BUY', '0.20', '5')), 'live', 'the token market read with the order');
          t.is(await post(order(alice, NO, 'BUY', '0.21', '5')), 'live');
          t.deepEqual(await reads(), { ...r0, before_ask: 2, book_filter: 1 });
        }
        const open = await call(node.url, 'GET', `/v1/open-orders?market=${market.condition_id}`, { token: A });
        t.deepEqual(
          open.body.map((o: { price: string; status: string }) => `${o.price} ${o.status}`).sort(),
          ['0.2 LIVE', '0.21 LIVE', '0.3 CANCELED', '0.31 LIVE', '0.32 LIVE'].sort(),
          JSON.stringify(open.body),
        );
      },
    );

/** A let-go filter holding the one finished order of the market's saved book. */
async function filterOf(c: pg.Client, market: string) {
  const r = await c.query(`select state->'finished'->0->>0 as hash from actor_snapshots where kind = 'market-book' and key = $1`, [market]);
  const f = emptyLetGo();
  addLetGo(f, r.rows[0].hash);
  return letGoOut(f);
}
