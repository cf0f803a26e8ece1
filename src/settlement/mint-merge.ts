// mint_tokens and merge_tokens (SPEC 4.3): par conversions of one wallet, no fee, no counterparty,
// each one on-chain transaction signed by the delegate under the wallet's standing allowances.
// What they spend is reserved in the Wallet actor for the time of the transaction, so an order
// resting on the same balance keeps what it holds (the conversion is refused instead).
import { randomUUID } from 'node:crypto';
import { PublicKey, type Connection, type Keypair } from '@solana/web3.js';
import { channel, type Asker, type Channel } from '../runtime/asker.ts';
import type { WalletProtocol } from '../../topics/wallet-commands.ts';
import type { BookProtocol } from '../../topics/clob-commands.ts';
import type { ChainGateway } from '../chain/gateway.ts';
import type { Catalog } from '../clob/catalog.ts';
import { invalid, notFound, unavailable } from '../errors.ts';
import { estimateComputeUnits, planMerge, planMint, signWithBudget } from '../chain/settlement-tx.ts';

export interface MintMergeDeps {
  asker: Asker;
  walletTopic: string;
  bookTopic: string;
  catalog: Catalog;
  chain: () => ChainGateway | null;
  connection: () => Connection | null;
  delegate: Keypair | null;
  collateralMint: () => Promise<string | null>;
  cuPrice: bigint;
}

export class MintMerge {
  private readonly wallet: Channel<WalletProtocol>;
  private readonly book: Channel<BookProtocol>;

  constructor(private d: MintMergeDeps) {
    this.wallet = channel(d.walletTopic);
    this.book = channel(d.bookTopic);
  }

  async run(wallet: string, op: 'mint' | 'merge', conditionId: string, amount: bigint) {
    const market = await this.d.catalog.get(conditionId);
    if (!market) throw notFound('market not found');
    const chain = this.d.chain();
    const conn = this.d.connection();
    if (!chain || !conn) throw unavailable('chain_unavailable', 'no chain RPC is configured');
    if (!this.d.delegate) throw unavailable('delegate_unavailable', 'CLOB_DELEGATE_KEYPAIR is not configured: the delegate cannot sign');
    const collateral = await this.d.collateralMint();
    if (!collateral) throw unavailable('config_unknown', 'the collateral mint is not known yet');
    const yes = market.yes_token_id as string;
    const no = market.no_token_id as string;
    // mint spends collateral; merge spends the YES and the NO tokens
    const spends =
      op === 'mint'
        ? [{ asset: 'collateral', mint: collateral }]
        : [
            { asset: yes, mint: yes },
            { asset: no, mint: no },
          ];
    const id = `${op}:${randomUUID()}`;
    const delegate = this.d.delegate.publicKey.toBase58();
    const held: string[] = [];
    let tokensHeld = false;
    try {
      const reads = [];
      for (const s of spends) {
        const h = await chain.holding(wallet, s.mint);
        if (h.delegate !== delegate || h.delegatedAmount < amount) {
          throw invalid(
            'allowance',
            `the delegate ${delegate} may not move ${amount} of ${s.asset === 'collateral' ? 'collateral' : s.asset} (allowance ${h.delegate === delegate ? h.delegatedAmount : 0n}); set it with the allowance tool`,
          );
        }
        reads.push({ ...s, h });
      }
      // Outcome tokens are held by their market's book (what its SELL orders hold stays theirs), both at once.
      if (op === 'merge') {
        const r = await this.d.asker.askTo(
          this.book,
          market.condition_id,
          {
            type: 'ReserveTokens',
            id,
            owner: wallet,
            holds: reads.map((x) => ({
              asset: x.asset,
              amount: amount.toString(),
              balance: { amount: x.h.amount.toString(), slot: x.h.slot },
            })),
            holdMs: 120_000,
            now: Date.now(),
          },
          { id: `reserve:${id}` },
        );
        if (!r.ok) throw invalid('INSUFFICIENT_BALANCE', r.message);
        tokensHeld = true;
      }
      for (const { h, ...s } of op === 'mint' ? reads : []) {
        const orderId = `${id}:${s.asset}`;
        const reserve = (key: string) =>
          this.d.asker.askTo(
            this.wallet,
            wallet,
            {
              type: 'Reserve',
              orderId,
              asset: s.asset,
              amount: amount.toString(),
              market: market.condition_id,
              balance: { amount: h.amount.toString(), slot: h.slot },
              holdMs: 120_000,
            },
            { id: key },
          );
        let r = await reserve(`reserve:${orderId}`);
        // Collateral granted to books and unused there is recalled first (actors/market-book/credit.ts).
        if (!r.ok && r.recall?.length) {
          await Promise.all(
            r.recall.map((m) =>
              this.d.asker
                .askTo(
                  this.book,
                  m,
                  { type: 'ReturnCredit', owner: wallet, walletTopic: this.d.walletTopic, now: Date.now() },
                  { id: `recall:${orderId}:${m}` },
                )
                .catch(() => undefined),
            ),
          );
          r = await reserve(`reserve:${orderId}:recall`);
        }
        if (!r.ok) throw invalid('INSUFFICIENT_BALANCE', r.message ?? 'amount exceeds the unreserved balance');
        held.push(orderId);
      }
      const accounts = {
        collateralMint: new PublicKey(collateral),
        delegate: this.d.delegate.publicKey,
        feeRecipient: this.d.delegate.publicKey,
      };
      const owner = new PublicKey(wallet);
      const ixs =
        op === 'mint'
          ? planMint(owner, new PublicKey(yes), new PublicKey(no), amount, accounts)
          : planMerge(owner, new PublicKey(yes), new PublicKey(no), amount, accounts);
      const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash('confirmed');
      const signed = signWithBudget(this.d.delegate, ixs, { blockhash, cuLimit: estimateComputeUnits(ixs), cuPrice: this.d.cuPrice });
      let signature: string;
      try {
        signature = await conn.sendRawTransaction(signed.raw, { skipPreflight: false, preflightCommitment: 'confirmed' });
      } catch (e: any) {
        throw invalid('transaction_failed', `${op}_tokens was refused: ${String(e?.message ?? e).slice(0, 300)}`);
      }
      const conf = await conn.confirmTransaction({ signature, blockhash, lastValidBlockHeight }, 'confirmed');
      if (conf.value.err) throw invalid('transaction_failed', `${op}_tokens failed: ${JSON.stringify(conf.value.err)}`);
      return {
        success: true,
        operation: `${op}_tokens`,
        market: market.condition_id,
        amount: amount.toString(),
        transaction_hash: signature,
      };
    } finally {
      if (tokensHeld)
        await this.d.asker
          .askTo(this.book, market.condition_id, { type: 'ReleaseTokens', id, now: Date.now() }, { id: `release:${id}` })
          .catch(() => undefined);
      for (const orderId of held) {
        await this.d.asker
          .askTo(this.wallet, wallet, { type: 'Release', orderId, reason: 'done' }, { id: `release:${orderId}` })
          .catch(() => undefined);
      }
    }
  }
}
