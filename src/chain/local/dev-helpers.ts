// Development and test helpers on the local chain (not part of any production path): bootstrap a
// configured program with a collateral mint and a seeded vault, fund wallets, and place, settle,
// claim and void parlays by sending real signed transactions through the chain's submission path.
import {
  Keypair,
  PublicKey,
  SystemProgram,
  TransactionMessage,
  VersionedTransaction,
  ComputeBudgetProgram,
  type TransactionInstruction,
} from '@solana/web3.js';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
  getAssociatedTokenAddressSync,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import { coder } from '../idl.ts';
import { programEventLines } from '../logs.ts';
import {
  claimParlayInstruction,
  createParlayInstruction,
  decodeParlayAccount,
  findConfigPda,
  findParlayPda,
  findVaultAuthorityPda,
  findVaultPda,
  initializeConfigInstruction,
  marketAddressFor,
  seedVaultInstruction,
  settleLegInstruction,
  updateConfigInstruction,
  voidParlayInstruction,
  withdrawVaultInstruction,
  type ParlayAccountData,
  type U64,
  type UpdateConfigArgs,
} from '../program.ts';
import type { Chain } from './chain.ts';
import { decodeConfig, isConfigAccount, type ConfigState } from './parlay/state.ts';
import { tokenBalanceOf } from './token-info.ts';
import type { TransactionErrorJson } from './tx-errors.ts';

export interface BootstrapOptions {
  maxLegs?: number;
  minStake?: bigint;
  maxStake?: bigint;
  maxPayoutCap?: bigint;
  exposureRatioBps?: number;
  houseEdgeBps?: number;
  /** collateral the authority seeds the vault with (default 100,000 units) */
  seedAmount?: bigint;
  authority?: Keypair;
}

export interface Bootstrap {
  authority: Keypair;
  collateralMint: PublicKey;
  config: PublicKey;
  vault: PublicKey;
  vaultAuthority: PublicKey;
  mintAuthority: Keypair;
}

export interface TxResult {
  signature: string;
  /** false when the transaction was refused or held by a fault and did not land */
  landed: boolean;
  err: TransactionErrorJson | null;
  logs: string[];
  slot?: number;
  /** the parlay program's events, decoded with Anchor's coder */
  events: { name: string; data: Record<string, unknown> }[];
}

export interface LegSpec {
  marketId: U64;
  probability: number;
  outcome?: number;
  market?: PublicKey;
}
export interface SendOptions {
  computeUnitLimit?: number;
  computeUnitPrice?: number;
}

const LEG_STATUS: Record<string, number> = { won: 1, lost: 2, voided: 3 };
const UNIT = 1_000_000n;

export class DevHelpers {
  private boot?: Bootstrap;

  constructor(private readonly chain: Chain) {}

  get bootstrapped(): Bootstrap {
    if (!this.boot) throw new Error('call bootstrap() first');
    return this.boot;
  }

  /** Sends a signed transaction (first signer pays) through sendTransaction without preflight. */
  send(instructions: TransactionInstruction[], signers: Keypair[], opts: SendOptions = {}): TxResult {
    const budget: TransactionInstruction[] = [];
    if (opts.computeUnitLimit !== undefined) budget.push(ComputeBudgetProgram.setComputeUnitLimit({ units: opts.computeUnitLimit }));
    if (opts.computeUnitPrice !== undefined)
      budget.push(ComputeBudgetProgram.setComputeUnitPrice({ microLamports: opts.computeUnitPrice }));
    const msg = new TransactionMessage({
      payerKey: signers[0].publicKey,
      recentBlockhash: this.chain.ledger.latestBlockhash().blockhash,
      instructions: [...budget, ...instructions],
    }).compileToLegacyMessage();
    const tx = new VersionedTransaction(msg);
    tx.sign(signers);
    const signature = this.chain.submit(tx, { skipPreflight: true });
    const rec = this.chain.ledger.get(signature);
    if (!rec) {
      // refused before execution (e.g. an unfunded fee payer), or held by a drop/stuck fault
      const sim = this.chain.executor.execute(tx, { simulate: true, sigVerify: true, clock: this.chain.ledger.clock() });
      return { signature, landed: false, err: sim.landed ? null : sim.err, logs: [], events: [] };
    }
    const events = programEventLines(rec.result.logs, this.chain.programId.toBase58())
      .events.map((e) => coder.events.decode(e.data))
      .filter((e): e is NonNullable<typeof e> => e !== null)
      .map((e) => ({ name: e.name, data: e.data as Record<string, unknown> }));
    return { signature, landed: true, err: rec.result.err, logs: rec.result.logs, slot: rec.slot, events };
  }

  private sendOk(instructions: TransactionInstruction[], signers: Keypair[], what: string): TxResult {
    const r = this.send(instructions, signers);
    if (!r.landed || r.err) throw new Error(`${what} failed: ${JSON.stringify(r.err)}\n${r.logs.join('\n')}`);
    return r;
  }

  airdrop(to: PublicKey, lamports: bigint): string {
    return this.chain.airdrop(to, lamports);
  }

  bootstrap(opts: BootstrapOptions = {}): Bootstrap {
    const authority = opts.authority ?? Keypair.generate();
    const mintAuthority = Keypair.generate();
    const mint = Keypair.generate();
    this.airdrop(authority.publicKey, 1000n * 10n ** 9n);
    this.airdrop(mintAuthority.publicKey, 1000n * 10n ** 9n);
    this.sendOk(
      [
        SystemProgram.createAccount({
          fromPubkey: mintAuthority.publicKey,
          newAccountPubkey: mint.publicKey,
          space: MINT_SIZE,
          lamports: Number(this.chain.svm.rentExempt(MINT_SIZE)),
          programId: TOKEN_PROGRAM_ID,
        }),
        createInitializeMint2Instruction(mint.publicKey, 6, mintAuthority.publicKey, null),
      ],
      [mintAuthority, mint],
      'create collateral mint',
    );
    this.sendOk(
      [
        initializeConfigInstruction({
          authority: authority.publicKey,
          collateralMint: mint.publicKey,
          programId: this.chain.programId,
          maxLegs: opts.maxLegs ?? 8,
          minStake: opts.minStake ?? UNIT,
          maxStake: opts.maxStake ?? 1000n * UNIT,
          maxPayoutCap: opts.maxPayoutCap ?? 50_000n * UNIT,
          exposureRatioBps: opts.exposureRatioBps ?? 8000,
          houseEdgeBps: opts.houseEdgeBps ?? 200,
        }),
      ],
      [authority],
      'initialize_config',
    );
    const pid = this.chain.programId;
    this.boot = {
      authority,
      collateralMint: mint.publicKey,
      config: findConfigPda(pid),
      vault: findVaultPda(pid),
      vaultAuthority: findVaultAuthorityPda(pid),
      mintAuthority,
    };
    const seed = opts.seedAmount ?? 100_000n * UNIT;
    if (seed > 0n) {
      const ata = this.fundWallet(authority.publicKey, 0n, seed);
      this.sendOk(
        [seedVaultInstruction({ depositor: authority.publicKey, depositorToken: ata, amount: seed, programId: pid })],
        [authority],
        'seed_vault',
      );
    }
    return this.boot;
  }

  /** The wallet's associated token account of the collateral mint. */
  tokenAccount(owner: PublicKey): PublicKey {
    return getAssociatedTokenAddressSync(this.bootstrapped.collateralMint, owner, true);
  }

  /** Airdrops lamports, creates the wallet's collateral ATA and mints collateral to it; returns the ATA. */
  fundWallet(owner: PublicKey, lamports: bigint, collateralAmount: bigint): PublicKey {
    const { collateralMint, mintAuthority } = this.bootstrapped;
    if (lamports > 0n) this.airdrop(owner, lamports);
    const ata = this.tokenAccount(owner);
    const ixs = [createAssociatedTokenAccountIdempotentInstruction(mintAuthority.publicKey, ata, owner, collateralMint)];
    if (collateralAmount > 0n) ixs.push(createMintToInstruction(collateralMint, ata, mintAuthority.publicKey, collateralAmount));
    this.sendOk(ixs, [mintAuthority], 'fund wallet');
    return ata;
  }

  createParlay(user: Keypair, args: { parlayId: U64; stake: U64; legs: LegSpec[] }, opts: SendOptions = {}): TxResult {
    const legs = args.legs.map((l) => ({
      marketId: l.marketId,
      probability: l.probability,
      outcome: l.outcome ?? 0,
      market: l.market ?? marketAddressFor(l.marketId, this.chain.programId),
    }));
    return this.send(
      [
        createParlayInstruction({
          user: user.publicKey,
          userToken: this.tokenAccount(user.publicKey),
          parlayId: args.parlayId,
          stake: args.stake,
          legs,
          programId: this.chain.programId,
        }),
      ],
      [user],
      opts,
    );
  }

  settleLeg(parlayId: U64, legIndex: number, status: number | 'won' | 'lost' | 'voided', resolver?: Keypair): TxResult {
    const signer = resolver ?? this.bootstrapped.authority;
    const parlay = this.readParlay(parlayId);
    const market = parlay?.legs[legIndex]?.market ?? PublicKey.default;
    const legStatus = typeof status === 'number' ? status : LEG_STATUS[status];
    return this.send(
      [settleLegInstruction({ resolver: signer.publicKey, parlayId, market, legIndex, legStatus, programId: this.chain.programId })],
      [signer],
    );
  }

  claimParlay(user: Keypair, parlayId: U64): TxResult {
    return this.send(
      [
        claimParlayInstruction({
          user: user.publicKey,
          userToken: this.tokenAccount(user.publicKey),
          parlayId,
          programId: this.chain.programId,
        }),
      ],
      [user],
    );
  }

  voidParlay(parlayId: U64, authority?: Keypair): TxResult {
    const signer = authority ?? this.bootstrapped.authority;
    const owner = this.readParlay(parlayId)?.user ?? signer.publicKey;
    return this.send(
      [
        voidParlayInstruction({
          authority: signer.publicKey,
          userToken: this.tokenAccount(owner),
          parlayId,
          programId: this.chain.programId,
        }),
      ],
      [signer],
    );
  }

  updateConfig(args: UpdateConfigArgs, authority?: Keypair): TxResult {
    const signer = authority ?? this.bootstrapped.authority;
    return this.send([updateConfigInstruction({ authority: signer.publicKey, programId: this.chain.programId, ...args })], [signer]);
  }

  seedVault(depositor: Keypair, amount: bigint): TxResult {
    return this.send(
      [
        seedVaultInstruction({
          depositor: depositor.publicKey,
          depositorToken: this.tokenAccount(depositor.publicKey),
          amount,
          programId: this.chain.programId,
        }),
      ],
      [depositor],
    );
  }

  withdrawVault(amount: bigint, authority?: Keypair, recipientToken?: PublicKey): TxResult {
    const signer = authority ?? this.bootstrapped.authority;
    return this.send(
      [
        withdrawVaultInstruction({
          authority: signer.publicKey,
          recipientToken: recipientToken ?? this.tokenAccount(this.bootstrapped.authority.publicKey),
          amount,
          programId: this.chain.programId,
        }),
      ],
      [signer],
    );
  }

  readParlay(parlayId: U64): ParlayAccountData | null {
    const acc = this.chain.svm.get(findParlayPda(parlayId, this.chain.programId));
    return acc ? decodeParlayAccount(acc.data) : null;
  }

  readConfig(): ConfigState | null {
    const acc = this.chain.svm.get(findConfigPda(this.chain.programId));
    return acc && isConfigAccount(acc.data) ? decodeConfig(acc.data) : null;
  }

  tokenBalance(account: PublicKey): bigint {
    return tokenBalanceOf(this.chain.svm, account);
  }

  vaultBalance(): bigint {
    return this.tokenBalance(findVaultPda(this.chain.programId));
  }
}
