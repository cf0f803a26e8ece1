// The embedded default (`npm start`: PGlite on disk, the in-process bus) killed with -9 right after
// its answers keeps every write it answered: PGlite runs with `fsync` off, so this holds for a
// killed process (its writes are in the operating system's files), not for a machine that loses
// power. The housekeeping checkpoints after the migrations (past 1 MB of WAL here), so the restarted
// node replays the deliveries' writes from the WAL and serves the same mirror; every delivery sent
// again changes nothing.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcessNode } from '../../helpers/process-node.ts';
import { JWT_SECRET, WEBHOOK_SECRET } from '../../helpers/node.ts';
import { assertFinalState, redeliverAll, runFixtureScenario } from '../../helpers/scenario.ts';

const EMBEDDED = {
  KAFKA_BROKERS: '',
  DATABASE_URL: '',
  PLATFORM_JWT_SECRET: JWT_SECRET,
  PARLAY_WEBHOOK_AUTH_SECRET: WEBHOOK_SECRET,
  PGLITE_CHECKPOINT_WAL_MB: '1',
  LOG_LEVEL: 'debug', // the housekeeping's passes, read below
};

test('embedded: kill -9 right after the answers loses no answered write; the restarted node serves the same mirror', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pglite-kill-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env = { ...EMBEDDED, DATA_DIR: join(dir, 'db') };
  const first = await startProcessNode(env);
  t.teardown(() => first.kill('SIGKILL'));
  await runFixtureScenario(t, first.url); // every delivery answered, the final state read back
  t.regex(first.output(), /"checkpointed":true/, 'a checkpoint was taken before the deliveries: their writes are replayed from the WAL');
  await first.kill('SIGKILL');
  t.is(first.child.signalCode, 'SIGKILL');

  const second = await startProcessNode(env);
  t.teardown(() => second.kill('SIGKILL'));
  await assertFinalState(t, second.url);
  await redeliverAll(t, second.url);
  await assertFinalState(t, second.url);
});
