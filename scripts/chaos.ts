// The long chaos run, on demand: npx tsx scripts/chaos.ts [nodes=3] [parlays=2000] [killEveryMs=3000]
import { printReport, runChaos } from '../test/chaos/harness.ts';

const [nodes = 3, parlays = 2000, killEveryMs = 3000] = process.argv.slice(2).map(Number);
const report = await runChaos({
  nodes,
  parlays,
  orders: parlays,
  killEveryMs,
  minKills: 3,
  restartBroker: true,
  brokerPort: 19492,
  concurrency: 8,
  log: (l) => console.log(l),
});
printReport(report);
process.exit(report.checks.every((c) => c.ok) ? 0 : 1);
