// The settlement step holds a lease, not a lock (issue 17): while it waits on the chain no
// transaction is open and the trade's row is not locked; a step whose lease another step took
// meanwhile records and sends nothing; a lease left behind (a step killed mid-way) holds the
// trade only until it runs out. Local chain (its RPC held back by a fault), PostgreSQL and Kafka.
import test from 'ava';
import pg from 'pg';
import { call } from '../../helpers/node.ts';
import { order } from '../../helpers/clob.ts';
import { settlementWorld, tradeOf, until, type SettlementWorld } from '../../helpers/settlement-world.ts';

let w: SettlementWorld;
let db: pg.Client;

test.before(async () => {
  w = await settlementWorld();
  await w.approveAll(w.alice);
  await w.approveAll(w.bob);
  db = new pg.Client({ connectionString: w.dbUrl });
  await db.connect();
});
test.after.always(async () => {
  await db?.end();
  await w?.close();
});

const sql = async (q: string, p: unknown[] = []) => (await db.query(q, p)).rows;
const place = (tok: string, o: any) => call(w.node.url, 'POST', '/v1/order', { token: tok, body: { order: o, orderType: 'GTC' } });
const attempts = (id: string) => sql('select attempt, created_at from settlement_attempts where trade_id = $1 order by attempt', [id]);
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

/** A matched trade whose first step is held in its look-up of the token accounts for `ms`. */
async function tradeHeldOnTheChain(price: string, ms: number): Promise<string> {
  const hangsBefore = w.chain.faults.stats.rpcHangs;
  w.chain.faults.rpcHang({ method: 'getMultipleAccounts', count: 1, ms }); // only the executor calls it
  const yes = w.yes.toBase58();
  t0 = Date.now();
  await place(w.A, order(w.alice, yes, 'SELL', price, '2'));
  const r = await place(w.B, order(w.bob, yes, 'BUY', price, '2', { feeRateBps: 100 }));
  if (r.body.status !== 'matched') throw new Error(JSON.stringify(r.body));
  await until(() => w.chain.faults.stats.rpcHangs > hangsBefore, 20_000, 'the step to wait on the chain');
  return r.body.tradeIDs[0];
}
let t0 = 0;

const confirmed = (id: string) =>
  until(
    async () => {
      const x = await tradeOf(w.node.url, w.B, w.market.condition_id, id);
      return x?.status === 'CONFIRMED' ? x : null;
    },
    30_000,
    `trade ${id} CONFIRMED`,
  );

test.serial('a step waiting on the chain holds no transaction and no lock on the trade', async (t) => {
  const id = await tradeHeldOnTheChain('0.40', 4000);
  // the row can be locked at once by anyone else (before: FOR UPDATE held across the RPC call)
  await db.query('begin');
  try {
    const rows = await sql('select trade_id from settlements where trade_id = $1 for update nowait', [id]);
    t.is(rows.length, 1, 'the row is not locked');
  } finally {
    await db.query('rollback');
  }
  // A transaction held across the call stays open and idle the whole time; another part of the
  // node (a relay, a projection) may be between two statements of its own at any instant, but not
  // in the same transaction 300 ms later.
  const idle = () =>
    sql(
      "select pid, xact_start::text as since from pg_stat_activity where datname = current_database() and state like 'idle in transaction%' and pid <> pg_backend_pid()",
    );
  const first = await idle();
  await sleep(300);
  const still = (await idle()).filter((b) => first.some((a) => a.pid === b.pid && a.since === b.since));
  t.deepEqual(still, [], 'no transaction left open across the RPC call');
  t.true(Date.now() - t0 < 4000, 'all of it checked while the RPC call was still held');
  const tr = await confirmed(id);
  t.is((await attempts(id)).length, 1);
  t.truthy(tr.transaction_hash);
});

test.serial('a step that lost its lease records and sends nothing; a lease left behind holds the trade until it runs out', async (t) => {
  const id = await tradeHeldOnTheChain('0.45', 2000);
  const [held] = await sql('select lease_owner, lease_until > now() as live from settlements where trade_id = $1', [id]);
  t.truthy(held.lease_owner, 'the waiting step holds the lease');
  t.true(held.live);
  // another step takes it (as once the waiting one's ran out) and is killed: its lease stays for 4 s
  const [{ until: stolenUntil }] = await sql(
    "update settlements set lease_owner = 'a-killed-step', lease_until = now() + interval '4 seconds' where trade_id = $1 returning lease_until as until",
    [id],
  );
  await sleep(2500); // the held RPC call answered, the waiting step finished
  t.is((await attempts(id)).length, 0, 'the step that lost its lease stored no attempt');
  const [s] = await sql('select status, lease_owner from settlements where trade_id = $1', [id]);
  t.like(s, { status: 'MATCHED', lease_owner: 'a-killed-step' }, 'nor changed the row or released a lease not its own');
  t.is((await tradeOf(w.node.url, w.B, w.market.condition_id, id)).status, 'MATCHED', 'nor reported anything');
  // once the lease left behind runs out, a step takes the trade and settles it, once
  await confirmed(id);
  const a = await attempts(id);
  t.is(a.length, 1);
  t.true(new Date(a[0].created_at).getTime() >= new Date(stolenUntil).getTime(), 'not before the lease ran out');
  const [after] = await sql('select lease_owner, lease_until from settlements where trade_id = $1', [id]);
  t.deepEqual(after, { lease_owner: null, lease_until: null }, 'the lease given back');
});
