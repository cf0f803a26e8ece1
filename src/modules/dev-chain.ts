// Development without SOLANA_RPC_URL: the local chain beside the node, wired to its mirror in
// process, its program initialized, the settlement delegate funded (src/dev/local-chain.ts).
import type { Logger } from 'pino';
import type { Keypair } from '@solana/web3.js';
import type { Config } from '../config.ts';
import type { Lifecycle } from '../lifecycle.ts';
import type { ParlayService } from '../parlay/service.ts';

export async function startDevChainModule(
  cfg: Config,
  o: { url: string; mirror: ParlayService; delegate: Keypair | null; log: Logger; life: Lifecycle },
): Promise<void> {
  const { startDevChain } = await import('../dev/local-chain.ts');
  // Its gateway signs void_parlay with the authority the local chain's program config was initialized with.
  const dev = await startDevChain({
    serviceUrl: o.url,
    mirror: o.mirror,
    port: cfg.localChainPort,
    log: o.log,
    delegate: o.delegate,
    platformJwtSecret: cfg.platformJwtSecret,
  });
  o.mirror.setChain(dev.gateway);
  o.life.defer('local chain', () => dev.close());
}
