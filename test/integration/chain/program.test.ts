// The emulated parlay program on the local chain: events (decoded back from getTransaction's logs
// with Anchor's coder), token movements, and every rule's error.
import test, { type ExecutionContext } from 'ava';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, SendTransactionError, Transaction, type Connection } from '@solana/web3.js';
import { coder, PARLAY_PROGRAM_ID } from '../../../src/chain/idl.ts';
import { programEventLines } from '../../../src/chain/logs.ts';
import { createParlayInstruction, findConfigPda, findParlayPda, findVaultPda, marketAddressFor } from '../../../src/chain/program.ts';
import { startLocalChain, type BootstrapOptions, type TxResult } from '../../../src/chain/local/index.ts';

const U = 1_000_000n;

/** BN → bigint, PublicKey → base58, recursively. */
function plain(v: unknown): unknown {
  if (v instanceof PublicKey) return v.toBase58();
  if (v && typeof v === 'object' && 'toArrayLike' in v) return BigInt((v as { toString(): string }).toString());
  if (Buffer.isBuffer(v)) return [...v];
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

async function eventsOf(conn: Connection, signature: string) {
  const tx = await conn.getTransaction(signature, { maxSupportedTransactionVersion: 0, commitment: 'confirmed' });
  return programEventLines(tx!.meta!.logMessages!, PARLAY_PROGRAM_ID.toBase58()).events.map((e) => {
    const ev = coder.events.decode(e.data)!;
    return { name: ev.name, data: plain(ev.data) as Record<string, unknown>, blockTime: tx!.blockTime };
  });
}

async function setup(t: ExecutionContext, opts: BootstrapOptions = {}) {
  const chain = await startLocalChain();
  t.teardown(() => chain.close());
  const boot = await chain.bootstrap(opts);
  const alice = Keypair.generate();
  await chain.fundWallet(alice.publicKey, BigInt(LAMPORTS_PER_SOL), 5_000n * U);
  return { chain, boot, alice, conn: chain.connection() };
}

const twoLegs = [
  { marketId: 101, probability: 500_000 },
  { marketId: 102, probability: 400_000, outcome: 1 },
];

function expectError(t: ExecutionContext, r: TxResult, code: number, name: string) {
  t.true(r.landed);
  t.deepEqual(r.err, { InstructionError: [0, { Custom: code }] }, name);
  t.true(
    r.logs.some((l) => l.startsWith('Program log: AnchorError') && l.includes(`Error Code: ${name}. Error Number: ${code}.`)),
    name,
  );
  t.is(r.logs.at(-1), `Program ${PARLAY_PROGRAM_ID.toBase58()} failed: custom program error: 0x${code.toString(16)}`);
}

test('create, settle, settle, claim: events, fields and balances (fixture 03 numbers)', async (t) => {
  const { chain, boot, alice, conn } = await setup(t);
  const aliceAta = chain.tokenAccount(alice.publicKey);
  const vault0 = chain.vaultBalance();
  t.is(vault0, 100_000n * U);

  const created = await chain.createParlay(alice, { parlayId: 1, stake: 10n * U, legs: twoLegs });
  t.is(created.err, null);
  const [ev] = await eventsOf(conn, created.signature);
  t.is(ev.name, 'ParlayCreated');
  t.deepEqual(ev.data, {
    parlay_id: 1n,
    user: alice.publicKey.toBase58(),
    stake: 10n * U,
    combined_probability: 200_000_000_000n,
    potential_payout: 49n * U,
    legs: [
      { market_id: 101n, market: marketAddressFor(101).toBase58(), outcome: 0, probability: 500_000 },
      { market_id: 102n, market: marketAddressFor(102).toBase58(), outcome: 1, probability: 400_000 },
    ],
    vault_balance: 100_010n * U,
    total_staked: 10n * U,
    total_exposure: 49n * U,
    created_at: BigInt(ev.blockTime!),
  });
  t.is(chain.tokenBalance(aliceAta), 4_990n * U);
  t.is(chain.vaultBalance(), 100_010n * U);
  t.is((await conn.getTokenAccountBalance(findVaultPda())).value.amount, String(100_010n * U));
  // a token-program CPI is nested inside the program's invocation
  t.true(created.logs.includes('Program TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA invoke [2]'));

  const s0 = await chain.settleLeg(1, 0, 'won');
  const [leg0] = await eventsOf(conn, s0.signature);
  t.is(leg0.name, 'LegSettled');
  t.deepEqual(leg0.data, {
    parlay_id: 1n,
    leg_index: 0,
    market_id: 101n,
    leg_status: 1,
    parlay_status: 0,
    legs_won: 1,
    legs_lost: 0,
    legs_resolved: 1,
    actual_payout: 0n,
    total_exposure: 49n * U,
    settled_at: BigInt(leg0.blockTime!),
  });
  const s1 = await chain.settleLeg(1, 1, 'won');
  const [leg1] = await eventsOf(conn, s1.signature);
  t.like(leg1.data, { leg_index: 1, parlay_status: 1, legs_won: 2, legs_resolved: 2, actual_payout: 49n * U, total_exposure: 0n });

  const claim = await chain.claimParlay(alice, 1);
  const [cl] = await eventsOf(conn, claim.signature);
  t.is(cl.name, 'ParlayClaimed');
  t.deepEqual(cl.data, {
    parlay_id: 1n,
    user: alice.publicKey.toBase58(),
    amount: 49n * U,
    vault_balance: 99_961n * U,
    total_paid_out: 49n * U,
    claimed_at: BigInt(cl.blockTime!),
  });
  t.is(chain.tokenBalance(aliceAta), 5_039n * U);
  t.is(chain.readParlay(1)!.status, 3);
  expectError(t, await chain.claimParlay(alice, 1), 6010, 'ParlayNotClaimable');
  t.is(boot.vault.toBase58(), findVaultPda().toBase58());
});

test('config and vault events: ConfigInitialized, VaultSeeded, ConfigUpdated, VaultWithdrawn', async (t) => {
  const { chain, boot, alice, conn } = await setup(t);
  const sigs = (await conn.getSignaturesForAddress(findConfigPda())).map((s) => s.signature).reverse();
  const [init] = await eventsOf(conn, sigs[0]);
  t.is(init.name, 'ConfigInitialized');
  t.deepEqual(init.data, {
    config: {
      authority: boot.authority.publicKey.toBase58(),
      collateral_mint: boot.collateralMint.toBase58(),
      vault: boot.vault.toBase58(),
      max_legs: 8,
      min_stake: U,
      max_stake: 1_000n * U,
      max_payout_cap: 50_000n * U,
      exposure_ratio_bps: 8000,
      house_edge_bps: 200,
      paused: false,
    },
  });
  const [seeded] = await eventsOf(conn, sigs[1]);
  t.deepEqual(seeded, {
    name: 'VaultSeeded',
    data: { depositor: boot.authority.publicKey.toBase58(), amount: 100_000n * U, vault_balance: 100_000n * U },
    blockTime: seeded.blockTime,
  });

  const upd = await chain.updateConfig({ maxLegs: 4, houseEdgeBps: 300, paused: true });
  const [updated] = await eventsOf(conn, upd.signature);
  t.is(updated.name, 'ConfigUpdated');
  t.like(updated.data, { config: { max_legs: 4, house_edge_bps: 300, paused: true, min_stake: U, exposure_ratio_bps: 8000 } });

  const authorityAta = chain.tokenAccount(boot.authority.publicKey);
  const w = await chain.withdrawVault(1_000n * U);
  const [withdrawn] = await eventsOf(conn, w.signature);
  t.deepEqual(withdrawn.data, { recipient: authorityAta.toBase58(), amount: 1_000n * U, vault_balance: 99_000n * U });
  t.is(chain.tokenBalance(authorityAta), 1_000n * U);
  expectError(t, await chain.withdrawVault(1n, alice), 6012, 'Unauthorized');
  // more than the vault holds: the token program's insufficient funds (custom error 1)
  const tooMuch = await chain.withdrawVault(1_000_000n * U);
  t.deepEqual(tooMuch.err, { InstructionError: [0, { Custom: 1 }] });
  t.true(tooMuch.logs.includes('Program log: Error: insufficient funds'));
});

test('void_parlay refunds the stake: ParlayVoided', async (t) => {
  const { chain, alice, conn } = await setup(t);
  await chain.createParlay(alice, { parlayId: 7, stake: 20n * U, legs: twoLegs });
  t.is(chain.tokenBalance(chain.tokenAccount(alice.publicKey)), 4_980n * U);
  expectError(t, await chain.voidParlay(7, alice), 6012, 'Unauthorized');
  const v = await chain.voidParlay(7);
  t.is(v.err, null);
  const [ev] = await eventsOf(conn, v.signature);
  t.deepEqual(ev, {
    name: 'ParlayVoided',
    data: {
      parlay_id: 7n,
      refund: 20n * U,
      vault_balance: 100_000n * U,
      total_paid_out: 20n * U,
      total_exposure: 0n,
      voided_at: BigInt(ev.blockTime!),
    },
    blockTime: ev.blockTime,
  });
  t.is(chain.tokenBalance(chain.tokenAccount(alice.publicKey)), 5_000n * U);
  t.is(chain.readParlay(7)!.status, 5);
  expectError(t, await chain.voidParlay(7), 6009, 'ParlayNotActive');
  expectError(t, await chain.claimParlay(alice, 7), 6010, 'ParlayNotClaimable');
});

test('lost, voided and partly voided parlays', async (t) => {
  const { chain, alice } = await setup(t);
  await chain.createParlay(alice, { parlayId: 1, stake: 10n * U, legs: twoLegs });
  const lost = await chain.settleLeg(1, 1, 'lost');
  t.like(lost.events[0].data, { parlay_status: 2, legs_lost: 1, legs_resolved: 1 });
  t.is(chain.readConfig()!.totalExposure, 0n);
  expectError(t, await chain.settleLeg(1, 0, 'won'), 6009, 'ParlayNotActive');
  expectError(t, await chain.claimParlay(alice, 1), 6010, 'ParlayNotClaimable');

  await chain.createParlay(alice, { parlayId: 2, stake: 10n * U, legs: twoLegs });
  await chain.settleLeg(2, 0, 'voided');
  const all = await chain.settleLeg(2, 1, 'voided');
  t.like(all.events[0].data, { parlay_status: 4, legs_resolved: 2 });
  t.is(BigInt(all.events[0].data.actual_payout!.toString()), 10n * U);
  const before = chain.tokenBalance(chain.tokenAccount(alice.publicKey));
  t.is((await chain.claimParlay(alice, 2)).err, null);
  t.is(chain.tokenBalance(chain.tokenAccount(alice.publicKey)), before + 10n * U);

  // a voided leg counts as won with probability 1: payout recomputed over the other leg
  await chain.createParlay(alice, { parlayId: 3, stake: 10n * U, legs: twoLegs });
  await chain.settleLeg(3, 1, 'voided');
  const won = await chain.settleLeg(3, 0, 'won');
  t.like(won.events[0].data, { parlay_status: 1, legs_won: 1, legs_resolved: 2 });
  t.is(BigInt(won.events[0].data.actual_payout!.toString()), 19_600_000n); // 10 × 0.98 / 0.5
});

test('create_parlay rules: every error code', async (t) => {
  const { chain, alice } = await setup(t);
  const create = (parlayId: number, stake: bigint, legs: { marketId: number; probability: number }[]) =>
    chain.createParlay(alice, { parlayId, stake, legs });
  expectError(t, await create(1, 10n * U, [{ marketId: 1, probability: 500_000 }]), 6002, 'TooFewLegs');
  expectError(
    t,
    await create(
      1,
      10n * U,
      Array.from({ length: 9 }, (_, i) => ({ marketId: i + 1, probability: 900_000 })),
    ),
    6001,
    'TooManyLegs',
  );
  expectError(
    t,
    await create(1, 10n * U, [
      { marketId: 5, probability: 500_000 },
      { marketId: 5, probability: 400_000 },
    ]),
    6003,
    'DuplicateMarket',
  );
  expectError(
    t,
    await create(1, 10n * U, [
      { marketId: 5, probability: 0 },
      { marketId: 6, probability: 400_000 },
    ]),
    6008,
    'InvalidProbability',
  );
  expectError(
    t,
    await create(1, 10n * U, [
      { marketId: 5, probability: 1_000_000 },
      { marketId: 6, probability: 400_000 },
    ]),
    6008,
    'InvalidProbability',
  );
  expectError(
    t,
    await create(
      1,
      U / 2n,
      twoLegs.map((l) => ({ ...l })),
    ),
    6004,
    'StakeBelowMinimum',
  );
  expectError(t, await create(1, 1_001n * U, twoLegs), 6005, 'StakeAboveMaximum');
  expectError(
    t,
    await create(1, 1_000n * U, [
      { marketId: 5, probability: 100_000 },
      { marketId: 6, probability: 100_000 },
    ]),
    6006,
    'PayoutCapExceeded',
  );
  // nothing moved, nothing created
  t.is(chain.tokenBalance(chain.tokenAccount(alice.publicKey)), 5_000n * U);
  t.is(chain.readParlay(1), null);

  await chain.updateConfig({ paused: true });
  expectError(t, await create(1, 10n * U, twoLegs), 6007, 'VaultPaused');
  expectError(t, await chain.updateConfig({ paused: false }, alice), 6012, 'Unauthorized');
  await chain.updateConfig({ paused: false });
  t.is((await create(1, 10n * U, twoLegs)).err, null);
  // the same parlay id twice: the system program refuses to create the account again
  const again = await create(1, 10n * U, twoLegs);
  t.deepEqual(again.err, { InstructionError: [0, { Custom: 0 }] });
  t.true(again.logs.some((l) => l.includes('already in use')));
});

test('exposure headroom: ExposureLimitExceeded while smaller parlays still fit', async (t) => {
  // ratio 0.8 × 100 units = 80 units of headroom
  const { chain, alice } = await setup(t, { seedAmount: 100n * U });
  t.is((await chain.createParlay(alice, { parlayId: 1, stake: 10n * U, legs: twoLegs })).err, null); // exposure 49
  expectError(t, await chain.createParlay(alice, { parlayId: 2, stake: 10n * U, legs: twoLegs }), 6000, 'ExposureLimitExceeded');
  // 0.8 × 110 − 49 = 39 ≥ 24.5: a 5-unit parlay fits
  t.is((await chain.createParlay(alice, { parlayId: 3, stake: 5n * U, legs: twoLegs })).err, null);
  t.is(chain.readConfig()!.totalExposure, 49n * U + 24_500_000n);
  // a withdrawal that would leave the exposure unbacked is refused too
  expectError(t, await chain.withdrawVault(50n * U), 6000, 'ExposureLimitExceeded');
});

test('settle and claim checks: LegAlreadySettled, Unauthorized, ParlayNotClaimable', async (t) => {
  const { chain, alice } = await setup(t);
  const legs = [...twoLegs, { marketId: 103, probability: 800_000 }];
  await chain.createParlay(alice, { parlayId: 9, stake: 10n * U, legs });
  expectError(t, await chain.claimParlay(alice, 9), 6010, 'ParlayNotClaimable');
  expectError(t, await chain.settleLeg(9, 0, 'won', alice), 6012, 'Unauthorized');
  t.is((await chain.settleLeg(9, 0, 'won')).err, null);
  expectError(t, await chain.settleLeg(9, 0, 'lost'), 6011, 'LegAlreadySettled');
  await chain.settleLeg(9, 1, 'won');
  await chain.settleLeg(9, 2, 'won');
  const mallory = Keypair.generate();
  await chain.fundWallet(mallory.publicKey, BigInt(LAMPORTS_PER_SOL), 0n);
  expectError(t, await chain.claimParlay(mallory, 9), 6012, 'Unauthorized');
  t.is((await chain.claimParlay(alice, 9)).err, null);
});

test('errors through a Connection: preflight answers the AnchorError logs', async (t) => {
  const { chain, alice, conn } = await setup(t);
  const ix = createParlayInstruction({
    user: alice.publicKey,
    userToken: chain.tokenAccount(alice.publicKey),
    parlayId: 1,
    stake: 10n * U,
    legs: [{ marketId: 1, market: marketAddressFor(1), outcome: 0, probability: 500_000 }],
  });
  const tx = new Transaction().add(ix);
  tx.feePayer = alice.publicKey;
  tx.recentBlockhash = (await conn.getLatestBlockhash()).blockhash;
  tx.sign(alice);
  const err = await t.throwsAsync(conn.sendRawTransaction(tx.serialize()));
  t.true(err instanceof SendTransactionError);
  t.regex(err!.message, /custom program error: 0x1772/);
  t.true((err as SendTransactionError).logs!.some((l) => l.includes('Error Code: TooFewLegs. Error Number: 6002.')));
  // with skipPreflight it lands as a failed transaction
  const sig = await conn.sendRawTransaction(tx.serialize(), { skipPreflight: true });
  const got = await conn.getTransaction(sig, { maxSupportedTransactionVersion: 0 });
  t.deepEqual(got!.meta!.err, { InstructionError: [0, { Custom: 6002 }] });
  t.is(got!.meta!.fee, 5000);
  t.is(await conn.getAccountInfo(findParlayPda(1)), null);

  // insufficient collateral: the token program's custom error 1 inside the parlay program
  const poor = Keypair.generate();
  await chain.fundWallet(poor.publicKey, BigInt(LAMPORTS_PER_SOL), 5n * U);
  const r = await chain.createParlay(poor, { parlayId: 2, stake: 10n * U, legs: twoLegs });
  t.deepEqual(r.err, { InstructionError: [0, { Custom: 1 }] });
  t.true(r.logs.includes('Program log: Error: insufficient funds'));
  t.is(r.logs.at(-1), `Program ${PARLAY_PROGRAM_ID.toBase58()} failed: custom program error: 0x1`);
  t.is(chain.readParlay(2), null); // the created account was rolled back
  t.is(chain.tokenBalance(chain.tokenAccount(poor.publicKey)), 5n * U);
});

test('timestamps follow the chain clock (warpTime); config values are checked', async (t) => {
  const { chain, alice, conn } = await setup(t);
  const now = Math.floor(Date.now() / 1000);
  chain.warpTime(86_400);
  const r = await chain.createParlay(alice, { parlayId: 1, stake: 10n * U, legs: twoLegs });
  const [ev] = await eventsOf(conn, r.signature);
  t.true(Number(ev.data.created_at) >= now + 86_400);
  t.is(Number(ev.data.created_at), ev.blockTime ?? -1);
  t.is(chain.readParlay(1)!.createdAt, BigInt(ev.blockTime ?? 0));
  const bad = await chain.updateConfig({ houseEdgeBps: 10_000 });
  t.deepEqual(bad.err, { InstructionError: [0, { Custom: 2003 }] });
  t.is(chain.readConfig()!.houseEdgeBps, 200);
});
