// A whole order-book world for a test: the local chain with collateral and outcome mints, a node on
// Kafka and PostgreSQL, a market, two funded wallets signed in.
import { Keypair } from '@solana/web3.js';
import { startLocalChain, type LocalChain } from '../../src/chain/local/index.ts';
import { Web3Gateway } from '../../src/chain/gateway.ts';
import { testNode, KAFKA_BROKERS } from './node.ts';
import { freshDatabase } from './db.ts';
import { bearer, createMarket } from './clob.ts';
import { fundedPair, OutcomeTokens } from './chain-market.ts';
import type { ServiceNode } from '../../src/node.ts';

export const U = 1_000_000n;

export interface ClobWorld {
  chain: LocalChain;
  node: ServiceNode;
  tokens: OutcomeTokens;
  market: any;
  delegate: Keypair;
  alice: Keypair;
  bob: Keypair;
  A: string;
  B: string;
  close(): Promise<void>;
}

export async function clobWorld(env: Record<string, string> = {}, marketOver: Record<string, unknown> = {}): Promise<ClobWorld> {
  const chain = await startLocalChain();
  const boot = await chain.bootstrap();
  const db = await freshDatabase();
  const delegate = Keypair.generate();
  const node = await testNode(
    {
      DATABASE_URL: db.url,
      KAFKA_BROKERS,
      CLOB_COLLATERAL_MINT: boot.collateralMint.toBase58(),
      CLOB_DELEGATE: delegate.publicKey.toBase58(),
      CLOB_INTERNAL_TOKEN: 'internal-secret',
      ...env,
    },
    { chain: new Web3Gateway(chain.url, boot.authority) },
  );
  const tokens = await new OutcomeTokens(chain).create();
  const market = await createMarket(node.url, {
    yes_token_id: tokens.yes.publicKey.toBase58(),
    no_token_id: tokens.no.publicKey.toBase58(),
    taker_fee_bps: 100,
    min_size: '1',
    ...marketOver,
  });
  const [alice, bob] = await fundedPair(chain, tokens);
  const A = await bearer(node.url, alice);
  const B = await bearer(node.url, bob);
  return {
    chain,
    node,
    tokens,
    market,
    delegate,
    alice,
    bob,
    A,
    B,
    close: async () => {
      await node.close();
      await chain.close();
      await db.drop();
    },
  };
}

/** Another node of the world's cluster: the same database, broker, topics, mints and chain. */
export function secondNode(w: ClobWorld, env: Record<string, string> = {}): Promise<ServiceNode> {
  return testNode(
    {
      DATABASE_URL: w.node.config.databaseUrl,
      KAFKA_BROKERS,
      TOPIC_PREFIX: w.node.config.topicPrefix,
      CLOB_COLLATERAL_MINT: w.node.config.collateralMint,
      CLOB_DELEGATE: w.node.config.delegate,
      CLOB_INTERNAL_TOKEN: 'internal-secret',
      ...env,
    },
    { chain: w.node.parlays.chain() },
  );
}
