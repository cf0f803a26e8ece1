// The least an ingest path can do, as a bare HTTP server (no actors, no bus, no offsets, no
// snapshots, no idempotency): used by bench/ingest-floor.ts to measure this machine's floor.
//   FLOOR_STAGE=receive  read the body, answer 200
//   FLOOR_STAGE=decode   + JSON.parse, the webhook schema, Anchor decoding of every transaction
//   FLOOR_STAGE=write    + the parlays / parlay_legs rows, one transaction per delivery
//   FLOOR_STAGE=claim    + before the write, the service's event-identity claim (src/parlay/
//                        event-identity.ts: one row per event, its own statement): not something
//                        the contract asks for, but what the service does to keep an event that
//                        comes back with other bytes from passing as a new one. Shows its cost.
import { createServer } from 'node:http';
import { openOrm, migrate } from '../src/store/orm.ts';
import { formatQuery } from '../src/store/sql-format.ts';
import { webhookBody } from '../src/parlay/webhook-schema.ts';
import { decodeTransaction } from '../src/parlay/decode.ts';
import { projectParlays } from '../src/store/projections/parlay.ts';
import { PARLAY_PROGRAM_ID } from '../src/chain/program.ts';
import { EventIdentities, type EventClaim } from '../src/parlay/event-identity.ts';

const stage = process.env.FLOOR_STAGE ?? 'write';
const url = process.env.DATABASE_URL!;
const orm = stage === 'write' || stage === 'claim' ? await openOrm({ databaseUrl: url, poolMax: 16 }) : null;
if (orm) await migrate(orm, url);
// FLOOR_TRIGGERS=off: without the service's own triggers (the read cache's change notices), the schema's indexes only.
if (orm && process.env.FLOOR_TRIGGERS === 'off')
  for (const t of ['parlays', 'parlay_legs']) await (orm.em.getDriver() as any).execute(`alter table ${t} disable trigger user`);
const programId = PARLAY_PROGRAM_ID.toBase58();
// The claim over the driver, its statement formatted as the service's Db port does (src/modules/infrastructure.ts).
const identities = orm
  ? new EventIdentities(() => ({
      execute: (sql, params) =>
        (orm.em.getDriver() as any).execute(params?.length ? formatQuery(orm.em.getPlatform() as any, sql, params) : sql, []),
    }))
  : null;

async function handle(body: string): Promise<number> {
  if (stage === 'receive') return 0;
  const parsed = webhookBody.parse(JSON.parse(body));
  const txs = Array.isArray(parsed) ? parsed : [parsed];
  const events: any[] = [];
  const claims: EventClaim[] = [];
  for (const tx of txs) {
    const d = decodeTransaction(tx, programId);
    for (const c of d.commands) if (c.target === 'parlay') events.push(c.cmd);
    if (stage === 'claim') for (const e of d.events) claims.push({ signature: d.signature, index: e.index, hash: e.hash });
  }
  if (!orm) return events.length;
  if (stage === 'claim' && (await identities!.claim(claims)).size) throw new Error('conflicting events: the floor takes new ones only');
  const platform = orm.em.getPlatform() as any;
  const statements: string[] = [];
  await projectParlays(
    {
      execute: async (sql, params) => {
        statements.push(formatQuery(platform, sql, params ?? []));
        return [];
      },
    },
    [{ events } as any],
  );
  await (orm.em.getDriver() as any).execute(statements.join(';\n'));
  return events.length;
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    handle(Buffer.concat(chunks).toString('utf8')).then(
      (n) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`{"events":${n}}`);
      },
      (e) => {
        res.writeHead(500);
        res.end(String(e));
      },
    );
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening'));
// A TERM ends the process normally (so that --cpu-prof writes its profile).
process.on('SIGTERM', () => process.exit(0));
