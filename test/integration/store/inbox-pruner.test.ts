// Issue 19, reproduction 7: an order rejected after its reservation left `command_inbox` rows for
// good, so any wallet could grow the database without limit. Answered commands' rows are pruned
// past their retention, never while a replay or a re-sent outbox message could still need them.
import test from 'ava';
import pg from 'pg';
import { call } from '../../helpers/node.ts';
import { order } from '../../helpers/clob.ts';
import { clobWorld } from '../../helpers/clob-world.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { openOrm, migrate } from '../../../src/store/orm.ts';
import { pruneInbox } from '../../../src/store/inbox-pruner.ts';
import { orderHash, orderId } from '../../../src/clob/signed-order.ts';

test('pruning keeps what a replay, a retry or an unsent outbox message may still need', async (t) => {
  const db = await freshDatabase();
  t.teardown(() => db.drop());
  const orm = await openOrm({ databaseUrl: db.url });
  t.teardown(() => orm.close());
  await migrate(orm, db.url);
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  t.teardown(() => c.end());
  await c.query(`insert into consumer_offsets (group_id, topic, partition, next_offset, replay_from, owner, updated_at) values
    ('g', 'cmds', 0, 100, 50, 'n', now()), ('g2', 'cmds', 0, 120, null, 'n', now()), ('g', 'cmds', 1, 10, null, 'n', now())`);
  const row = (key: string, age: string, topic: string | null, partition: number | null, offset: number | null) =>
    c.query(
      `insert into command_inbox (key, reply, source_topic, source_partition, source_offset, created_at) values ($1, '{}', $2, $3, $4, now() - $5::interval)`,
      [key, topic, partition, offset, age],
    );
  await row('old-before-replay', '1 hour', 'cmds', 0, 10); // pruned
  await row('old-after-replay', '1 hour', 'cmds', 0, 60); // a replay from 50 reads it again: kept
  await row('old-other-partition', '1 hour', 'cmds', 1, 9); // pruned (before next 10)
  await row('young', '1 second', 'cmds', 0, 5); // an asker may still retry it: kept
  await row('old-no-source', '1 hour', null, null, null); // from before sources were kept: pruned
  await row('old-unknown-topic', '1 hour', 'elsewhere', 0, 1); // no group position known: kept
  const keys = async () => (await c.query('select key from command_inbox order by key')).rows.map((r) => r.key);
  const execute = (sql: string, params?: unknown[]) => (orm.em.getDriver() as any).execute(sql, params ?? []);

  // An outbox message older than every row: any of them may meet it again, nothing goes.
  await c.query(`insert into outbox (topic, key, value, created_at) values ('cmds', 'k', '{}', now() - interval '2 hours')`);
  t.is(await pruneInbox({ execute }, 60_000), 0);
  await c.query('delete from outbox');

  t.is(await pruneInbox({ execute }, 60_000, 2), 2, 'one statement deletes at most its batch');
  t.is(await pruneInbox({ execute }, 60_000), 1);
  t.is(await pruneInbox({ execute }, 60_000), 0);
  t.deepEqual(await keys(), ['old-after-replay', 'old-unknown-topic', 'young']);
});

test('a rejected order leaves no inbox rows behind once their retention passed', async (t) => {
  const w = await clobWorld({ RUNTIME_INBOX_RETENTION_MS: '1000', RUNTIME_INBOX_PRUNE_MS: '200', RUNTIME_CHECKPOINT_MS: '200' });
  t.teardown(() => w.close());
  const yes = w.market.yes_token_id as string;
  const place = (tok: string, o: any) => call(w.node.url, 'POST', '/v1/order', { token: tok, body: { order: o, orderType: 'GTC' } });
  const idOf = (o: any) => orderId(orderHash(o));

  const tooBig = order(w.alice, yes, 'BUY', '0.40', '100000');
  t.is((await place(w.A, tooBig)).body.code, 'INSUFFICIENT_BALANCE');
  t.is((await place(w.A, order(w.alice, yes, 'BUY', '0.30', '5'))).status, 200);
  const noFee = order(w.bob, yes, 'SELL', '0.30', '1', { feeRateBps: 0 });
  t.is((await place(w.B, noFee)).body.code, 'FEE_RATE_TOO_LOW');

  const c = new pg.Client({ connectionString: w.node.config.databaseUrl });
  await c.connect();
  t.teardown(() => c.end());
  const left = async () =>
    Number(
      (
        await c.query('select count(*) from command_inbox where key = any($1)', [
          [`place:${idOf(tooBig)}`, `grant:${idOf(tooBig)}:first`, `place:${idOf(noFee)}`],
        ])
      ).rows[0].count,
    );
  // (the BUY's in its book and, handed on for credit, in its wallet; the SELL's in its book)
  t.true((await left()) >= 3, 'the rejected orders wrote inbox rows (the books, the wallet)');
  const deadline = Date.now() + 20_000;
  while ((await left()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
  t.is(await left(), 0, 'pruned after their retention');
  const total = Number((await c.query('select count(*) from command_inbox')).rows[0].count);
  t.true(total < 10, `the inbox does not keep growing (${total} rows)`);
});
