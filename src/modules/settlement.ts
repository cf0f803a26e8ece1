// The settlement side as a module of the node: whose key signs (CLOB_DELEGATE_KEYPAIR, or in
// development with the local chain a generated delegate), the mint/merge operations, and the
// executor, started once the node's URL is known (it calls size-update on it).
import { Keypair } from '@solana/web3.js';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Lifecycle } from '../lifecycle.ts';
import type { Asker } from '../runtime/asker.ts';
import type { ChainGateway } from '../chain/gateway.ts';
import type { Catalog } from '../clob/catalog.ts';
import { connectionOf, delegateKeypair, startSettlement } from '../settlement/index.ts';
import { MintMerge } from '../settlement/mint-merge.ts';
import type { Infrastructure } from './infrastructure.ts';

export function settlementModule(
  cfg: Config,
  infra: Infrastructure,
  o: { devChain: boolean; chain: () => ChainGateway | null; log: Logger; life: Lifecycle },
) {
  // Development with the local chain and no delegate given: a fresh one, funded on the local chain
  // once it is up, so that trades settle there too. Never with SOLANA_RPC_URL or in production.
  const devDelegate = o.devChain && !cfg.solanaRpcUrl && !cfg.delegate && !cfg.delegateKeypair ? Keypair.generate() : null;
  const key = delegateKeypair(cfg) ?? devDelegate;
  /** The delegate makers approve: CLOB_DELEGATE, else the signing key's public key; null when none. */
  const delegate = cfg.delegate ?? key?.publicKey.toBase58() ?? null;
  const connection = connectionOf(cfg, o.chain);
  return {
    key,
    delegate,
    connection,
    mintMerge: (deps: { asker: Asker; catalog: Catalog; collateralMint(): Promise<string | null> }) =>
      new MintMerge({
        asker: deps.asker,
        walletTopic: infra.topics.wallet,
        bookTopic: infra.topics.book,
        catalog: deps.catalog,
        chain: o.chain,
        connection,
        delegate: key,
        collateralMint: deps.collateralMint,
        cuPrice: BigInt(cfg.settlementCuPrice),
      }),
    /** The executor runs where the delegate's key is (src/settlement/). */
    async start(url: string, collateralMint: () => Promise<string | null>, onOutbox?: () => void) {
      if (!key) return;
      const ex = await startSettlement({
        cfg,
        orm: infra.orm,
        bus: infra.bus,
        log: o.log,
        url,
        delegate: key,
        connection,
        collateralMint,
        bookTopic: infra.topics.book,
        tradesTopic: infra.topics.ledger('trades'),
        onOutbox,
      });
      o.life.defer('settlement executor', () => ex.stop());
    },
  };
}
