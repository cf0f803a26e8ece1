// A market whose outcome tokens are real SPL mints on the local chain, and wallets holding them.
import { Keypair, PublicKey, Transaction } from '@solana/web3.js';
import {
  createApproveInstruction,
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
  getAssociatedTokenAddressSync,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import { SystemProgram } from '@solana/web3.js';
import type { LocalChain } from '../../src/chain/local/index.ts';

export class OutcomeTokens {
  readonly yes = Keypair.generate();
  readonly no = Keypair.generate();
  readonly authority = Keypair.generate();

  constructor(private chain: LocalChain) {}

  private async send(ixs: any[], signers: Keypair[]) {
    const r = this.chain.dev.send(ixs, signers);
    if (r.err) throw new Error(`transaction failed: ${JSON.stringify(r.err)} ${r.logs.join('\n')}`);
    return r;
  }

  async create() {
    await this.chain.fundWallet(this.authority.publicKey, 10n ** 10n, 0n);
    const rent = 1_461_600;
    for (const m of [this.yes, this.no]) {
      await this.send(
        [
          SystemProgram.createAccount({
            fromPubkey: this.authority.publicKey,
            newAccountPubkey: m.publicKey,
            lamports: rent,
            space: MINT_SIZE,
            programId: TOKEN_PROGRAM_ID,
          }),
          createInitializeMint2Instruction(m.publicKey, 6, this.authority.publicKey, null),
        ],
        [this.authority, m],
      );
    }
    return this;
  }

  async give(owner: PublicKey, mint: PublicKey, amount: bigint) {
    const ata = getAssociatedTokenAddressSync(mint, owner, true);
    await this.send(
      [
        createAssociatedTokenAccountIdempotentInstruction(this.authority.publicKey, ata, owner, mint),
        createMintToInstruction(mint, ata, this.authority.publicKey, amount),
      ],
      [this.authority],
    );
    return ata;
  }
}

/** Sets the wallet's standing allowance on `mint` for `delegate`. */
export async function approve(chain: LocalChain, owner: Keypair, mint: PublicKey, delegate: PublicKey, amount: bigint) {
  const ata = getAssociatedTokenAddressSync(mint, owner.publicKey, true);
  const r = chain.dev.send([createApproveInstruction(ata, delegate, owner.publicKey, amount)], [owner]);
  if (r.err) throw new Error(`approve failed: ${JSON.stringify(r.err)}`);
}

export { Transaction };

/** Two fresh wallets, each with 1,000 units of collateral, 100 YES and 100 NO (and SOL for fees). */
export async function fundedPair(chain: LocalChain, tokens: OutcomeTokens): Promise<[Keypair, Keypair]> {
  const pair: [Keypair, Keypair] = [Keypair.generate(), Keypair.generate()];
  for (const w of pair) {
    await chain.fundWallet(w.publicKey, 10n ** 9n, 1_000n * 1_000_000n);
    await tokens.give(w.publicKey, tokens.yes.publicKey, 100n * 1_000_000n);
    await tokens.give(w.publicKey, tokens.no.publicKey, 100n * 1_000_000n);
  }
  return pair;
}
