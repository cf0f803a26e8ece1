// `npm start`: one node. Embedded by default (in-process bus, PGlite); set KAFKA_BROKERS and
// DATABASE_URL to join a cluster.
import { loadConfig, ConfigError } from './config.ts';
import { startNode } from './node.ts';

/**
 * kafkajs 2.2.4 arms its request queue's throttle timer with `throttledUntil - Date.now()` ms while
 * `throttledUntil` is still its initial -1 (never throttled): Node clamps the delay to 1 ms and
 * prints a TimeoutNegativeWarning on every node that uses Kafka. That one is harmless and dropped;
 * every other process warning is printed as before.
 */
function quietKafkajsTimerWarning() {
  const printers = process.listeners('warning');
  process.removeAllListeners('warning');
  process.on('warning', (w) => {
    if (w.name === 'TimeoutNegativeWarning') return;
    for (const print of printers) print(w);
  });
}

async function main() {
  quietKafkajsTimerWarning();
  let cfg;
  try {
    cfg = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`refusing to start: ${e.message}`);
      process.exit(2);
    }
    throw e;
  }
  const node = await startNode(cfg);
  const stop = async (signal: string) => {
    node.log.info({ signal }, 'stopping');
    const t = setTimeout(() => process.exit(1), 15_000);
    await node.close().catch((err) => node.log.error({ err }, 'close failed'));
    clearTimeout(t);
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
