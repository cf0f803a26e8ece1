// src/store/notify-listener.ts on PostgreSQL: `sync()` resolves only once every notification
// committed before its call has been handed over, also when many callers sync at once (they share
// tokens: fewer round trips than callers, none answered early); several channels share its one
// connection, each with its own payloads and gaps.
import test from 'ava';
import pg from 'pg';
import { freshDatabase } from '../../helpers/db.ts';
import { NotifyListener } from '../../../src/store/notify-listener.ts';

const log = { warn() {} };

test('concurrent syncs: each waits for what was committed before it, and they share their tokens', async (t) => {
  const db = await freshDatabase('notify');
  const writer = new pg.Client({ connectionString: db.url });
  const watcher = new pg.Client({ connectionString: db.url });
  const received = new Set<string>();
  const listener = new NotifyListener({ url: db.url, channel: 'ch', onPayload: (p) => received.add(p), onGap() {}, log });
  try {
    await writer.connect();
    await watcher.connect();
    // Every token a sync sends, seen by a second listener of the channels.
    const tokens = new Map<string, number>();
    watcher.on('notification', (n) => {
      if (n.payload?.startsWith('sync:')) tokens.set(n.channel, (tokens.get(n.channel) ?? 0) + 1);
    });
    await watcher.query('listen ch');
    await watcher.query('listen together');
    await listener.start();
    t.true(listener.listening);

    const callers = 40;
    const early: number[] = [];
    await Promise.all(
      Array.from({ length: callers }, async (_, i) => {
        // Committed, then synced: the sync may not resolve before this payload was handed over.
        await writer.query('select pg_notify($1, $2)', ['ch', `p${i}`]);
        await listener.sync();
        if (!received.has(`p${i}`)) early.push(i);
      }),
    );
    t.deepEqual(early, [], 'no sync resolved before a notification committed before its call');
    t.is(received.size, callers);
    t.true((tokens.get('ch') ?? 0) <= callers);

    // Syncs called while one is out share the next token: called together, two tokens (the first
    // and the one after it), whatever the machine's load. (How many share when the calls are spread
    // as above depends on timing: on a loaded machine every one went alone.)
    const together = new NotifyListener({ url: db.url, channel: 'together', onPayload() {}, onGap() {}, log });
    try {
      await together.start();
      await Promise.all(Array.from({ length: callers }, () => together.sync()));
      await watcher.query('select 1'); // the watcher's notifications so far are in
      for (let i = 0; i < 50 && (tokens.get('together') ?? 0) < 2; i++) await new Promise((r) => setTimeout(r, 20));
      t.is(tokens.get('together'), 2, `${tokens.get('together')} tokens for ${callers} callers at once`);
    } finally {
      await together.close();
    }

    // Alone, a sync still makes its own round trip and waits for it.
    await writer.query('select pg_notify($1, $2)', ['ch', 'last']);
    await listener.sync();
    t.true(received.has('last'));
  } finally {
    await listener.close();
    await writer.end();
    await watcher.end();
    await db.drop();
  }
});

test('a sync while not listening (no connection yet) resolves at once', async (t) => {
  const listener = new NotifyListener({
    url: 'postgres://postgres@127.0.0.1:1/none',
    channel: 'ch',
    onPayload() {},
    onGap() {},
    log,
    reconnectMs: 60_000,
  });
  await listener.start(); // refused: not listening, reconnects later
  t.false(listener.listening);
  await listener.sync();
  await listener.close();
  t.pass();
});

test('several channels on one connection: each gets its own payloads and gaps, also one subscribed after the start', async (t) => {
  const db = await freshDatabase('notifych');
  const writer = new pg.Client({ connectionString: db.url });
  const got: Record<string, string[]> = { a: [], b: [] };
  const gaps: Record<string, number> = { a: 0, b: 0 };
  const listener = new NotifyListener({ url: db.url, channel: 'sync_only', log, reconnectMs: 50 });
  try {
    await writer.connect();
    const a = listener.subscribe('a', { onPayload: (p) => got.a.push(p), onGap: () => gaps.a++ });
    await a.listened;
    t.false(a.listening(), 'no connection yet: `listened` does not wait for one');
    await listener.start();
    t.true(a.listening());
    t.is(gaps.a, 1, 'a: the gap before it listened');
    const b = listener.subscribe('b', { onPayload: (p) => got.b.push(p), onGap: () => gaps.b++ });
    t.false(b.listening(), 'its LISTEN not done yet');
    await b.listened;
    t.true(b.listening(), 'listening once `listened` resolved');
    t.is(gaps.b, 1, 'b: the gap before it listened');
    t.throws(() => listener.subscribe('a', { onPayload() {}, onGap() {} }));

    await writer.query(`select pg_notify('a', 'a1'), pg_notify('b', 'b1'), pg_notify('c', 'c1')`);
    await listener.sync();
    t.deepEqual(got, { a: ['a1'], b: ['b1'] });
    const [{ n }] = (
      await writer.query(
        `select count(*)::int as n from pg_stat_activity where application_name = 'listen:sync_only' and datname = current_database()`,
      )
    ).rows;
    t.is(n, 1, 'one connection');

    // The connection lost: both channels told, both listen again on the next one.
    await writer.query(
      `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'listen:sync_only' and datname = current_database()`,
    );
    for (let i = 0; i < 100 && a.listening(); i++) await new Promise((r) => setTimeout(r, 10));
    t.false(a.listening());
    t.false(b.listening());
    for (let i = 0; i < 300 && !(a.listening() && b.listening()); i++) await new Promise((r) => setTimeout(r, 10));
    t.true(a.listening() && b.listening());
    t.deepEqual(gaps, { a: 3, b: 3 }, 'lost, then listening again: a gap each time');
    await writer.query(`select pg_notify('b', 'b2')`);
    await listener.sync();
    t.deepEqual(got, { a: ['a1'], b: ['b1', 'b2'] });
  } finally {
    await listener.close();
    await writer.end();
    await db.drop();
  }
});
