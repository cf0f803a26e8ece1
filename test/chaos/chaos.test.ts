// The chaos run in its short form: 3 nodes under load, a random node SIGKILLed every few seconds
// (at least 3 times) and restarted, the broker restarted once; nothing lost, duplicated or diverging.
import test from 'ava';
import { printReport, runChaos } from './harness.ts';

test('chaos: kills under load lose, duplicate and diverge nothing', async (t) => {
  const report = await runChaos({
    nodes: 3,
    parlays: 200,
    orders: 150,
    killEveryMs: 2500,
    minKills: 3,
    restartBroker: true,
    brokerPort: 19292,
    concurrency: 6,
    log: (l) => t.log(l),
  });
  printReport(report);
  t.true(report.kills >= 3);
  t.is(report.brokerRestarts, 1);
  for (const c of report.checks) t.true(c.ok, `${c.name}: ${c.detail ?? ''}`);
});
