// `npm start`: one node. Embedded by default (in-process bus, PGlite); set KAFKA_BROKERS and
// DATABASE_URL to join a cluster.
import { loadConfig, ConfigError } from './config.ts';
import { startNode, PortBusy, DataDirBusy } from './node.ts';

async function main() {
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
  let node;
  try {
    node = await startNode(cfg);
  } catch (e) {
    // What an operator fixes in the settings or the machine: one line, no stack.
    if (e instanceof PortBusy || e instanceof DataDirBusy) {
      console.error(`refusing to start: ${e.message}`);
      process.exit(2);
    }
    throw e;
  }
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
