// The parlay mirror as a module of the node: its actor kinds, the use cases (with the read cache of
// user reads on PostgreSQL), its routes.
import type { Logger } from 'pino';
import { Keypair } from '@solana/web3.js';
import { existsSync, readFileSync } from 'node:fs';
import type { Config } from '../config.ts';
import type { Lifecycle } from '../lifecycle.ts';
import type { Asker } from '../runtime/asker.ts';
import { parlayKinds } from '../parlay/kinds.ts';
import { ParlayService } from '../parlay/service.ts';
import { ParlayReadCache } from '../parlay/read-cache.ts';
import { Web3Gateway, parseKeypair, type ChainGateway } from '../chain/gateway.ts';
import { PARLAY_PROGRAM_ID } from '../chain/idl.ts';
import { parlayRoutes } from '../http/routes/parlays.ts';
import type { Edge } from '../http/edge.ts';
import type { Infrastructure, Metrics } from './infrastructure.ts';

export const parlayModuleKinds = (infra: Infrastructure) => parlayKinds(infra.topics.parlay);

export async function parlayModule(
  cfg: Config,
  infra: Infrastructure,
  o: {
    asker: Asker;
    chain?: ChainGateway | null;
    authority?: Keypair;
    log: Logger;
    metrics: Metrics;
    life: Lifecycle;
  },
) {
  const chain =
    o.chain !== undefined
      ? o.chain
      : cfg.solanaRpcUrl
        ? new Web3Gateway(cfg.solanaRpcUrl, authorityOf(cfg, o.authority, o.log), o.log)
        : null;
  // The parlay reads users poll, answered from memory while PostgreSQL's change notifications arrive.
  let reads: { cache: ParlayReadCache<Buffer>; settled(): Promise<void> } | undefined;
  const notifications = infra.notifications;
  if (notifications && cfg.readCacheWallets > 0) {
    let sub: { listening(): boolean } | null = null;
    const cache = new ParlayReadCache<Buffer>(() => sub?.listening() ?? false, cfg.readCacheWallets, o.metrics.readCache);
    const subscribed = notifications.subscribe('parlay_reads', { onPayload: (p) => cache.changed(p), onGap: () => cache.clear() });
    sub = subscribed;
    await subscribed.listened; // before serving (see NotifyListener.subscribe)
    reads = { cache, settled: () => notifications.sync() };
  }
  const service = new ParlayService({
    db: infra.db,
    reader: infra.reader,
    reads,
    asker: o.asker,
    store: infra.store,
    topic: infra.topics.parlay,
    programId: cfg.programId ?? PARLAY_PROGRAM_ID.toBase58(),
    packCreations: cfg.packedEvents,
    chain,
    log: o.log,
    metrics: o.metrics.ingest,
  });
  return {
    service,
    // Unset PARLAY_WEBHOOK_AUTH_SECRET: the webhook route answers 503 (the development local chain
    // hands its deliveries to the mirror in process).
    routes: (edge: Edge) => [parlayRoutes(service, { jwtSecret: cfg.platformJwtSecret, webhookSecret: cfg.webhookSecret, edge })],
  };
}

export function readKeypair(value: string): Keypair {
  return parseKeypair(existsSync(value) ? readFileSync(value, 'utf8') : value);
}

/**
 * The key that signs void_parlay through SOLANA_RPC_URL: PARLAY_AUTHORITY_KEYPAIR, else in
 * development a generated one (its public key logged: the program's config must name it for a
 * void to land); null in production without the setting (admin void answers 503).
 */
function authorityOf(cfg: Config, given: Keypair | undefined, log: Logger): Keypair | null {
  if (given) return given;
  if (cfg.authorityKeypair) return readKeypair(cfg.authorityKeypair);
  if (cfg.env !== 'development') return null;
  const generated = Keypair.generate();
  log.warn(
    { authority: generated.publicKey.toBase58() },
    'PARLAY_AUTHORITY_KEYPAIR unset (development): generated a void_parlay authority; the program config must name it',
  );
  return generated;
}
