// Compute budgets and injected faults: compute exhaustion, dropped and stuck transactions, RPC errors and hangs.
import test from 'ava';
import {
  ComputeBudgetProgram,
  Keypair,
  LAMPORTS_PER_SOL,
  SendTransactionError,
  SystemProgram,
  Transaction,
  TransactionExpiredBlockheightExceededError,
  type Connection,
  type TransactionInstruction,
} from '@solana/web3.js';
import { createTransferInstruction } from '@solana/spl-token';
import { PARLAY_PROGRAM_ID } from '../../../src/chain/idl.ts';
import { createParlayInstruction, marketAddressFor } from '../../../src/chain/program.ts';
import { startLocalChain, BLOCKHASH_VALID_SLOTS } from '../../../src/chain/local/index.ts';

const U = 1_000_000n;
const PID = PARLAY_PROGRAM_ID.toBase58();
const legs = [
  { marketId: 101, market: marketAddressFor(101), outcome: 0, probability: 500_000 },
  { marketId: 102, market: marketAddressFor(102), outcome: 1, probability: 400_000 },
];

async function signed(conn: Connection, payer: Keypair, ixs: TransactionInstruction[]) {
  const latest = await conn.getLatestBlockhash();
  const tx = new Transaction({ feePayer: payer.publicKey, ...latest }).add(...ixs);
  tx.sign(payer);
  return { raw: tx.serialize(), ...latest };
}

async function setup() {
  const chain = await startLocalChain();
  await chain.bootstrap();
  const alice = Keypair.generate();
  const ata = await chain.fundWallet(alice.publicKey, BigInt(LAMPORTS_PER_SOL), 1_000n * U);
  const conn = chain.connection();
  const parlayIx = (parlayId: number) => createParlayInstruction({ user: alice.publicKey, userToken: ata, parlayId, stake: 10n * U, legs });
  return { chain, alice, ata, conn, parlayIx };
}

test('a compute-unit limit below what the program needs exhausts it and rolls back', async (t) => {
  const { chain, alice, ata, conn, parlayIx } = await setup();
  t.teardown(() => chain.close());
  const r = await chain.createParlay(
    alice,
    { parlayId: 1, stake: 10n * U, legs },
    { computeUnitLimit: 5_000, computeUnitPrice: 1_000_000 },
  );
  t.deepEqual(r.err, { InstructionError: [2, 'ProgramFailedToComplete'] });
  t.is(r.logs.at(-1), `Program ${PID} failed: exceeded CUs meter at BPF instruction`);
  t.true(r.logs.includes(`Program ${PID} consumed 5000 of 5000 compute units`));
  const got = await conn.getTransaction(r.signature, { maxSupportedTransactionVersion: 0 });
  t.is(got!.meta!.fee, 5000 + 5000); // signature + 1 lamport per CU requested
  t.is(chain.tokenBalance(ata), 1_000n * U);
  t.is(chain.readParlay(1), null);

  // the SPL Token program runs natively and exhausts natively
  const bob = Keypair.generate();
  const bobAta = await chain.fundWallet(bob.publicKey, 0n, 0n);
  const { raw } = await signed(conn, alice, [
    ComputeBudgetProgram.setComputeUnitLimit({ units: 20 }),
    createTransferInstruction(ata, bobAta, alice.publicKey, 1n),
  ]);
  const sig = await conn.sendRawTransaction(raw, { skipPreflight: true });
  const native = await conn.getTransaction(sig, { maxSupportedTransactionVersion: 0 });
  t.deepEqual(native!.meta!.err, { InstructionError: [1, 'ProgramFailedToComplete'] });
  t.true(native!.meta!.logMessages!.some((l) => l.endsWith('exceeded CUs meter at BPF instruction')));

  // doubling is enough: the program lands within a 200k default
  const ok = await chain.createParlay(alice, { parlayId: 1, stake: 10n * U, legs }, { computeUnitLimit: 60_000 });
  t.is(ok.err, null);
  t.true(Number(/consumed (\d+) of 60000/.exec(ok.logs.find((l) => l.startsWith(`Program ${PID} consumed`))!)![1]) < 60_000);
  void parlayIx;
});

test('fault: next transaction runs out of compute units (with and without preflight)', async (t) => {
  const { chain, conn, alice, parlayIx } = await setup();
  t.teardown(() => chain.close());
  chain.faults.exhaustCompute();
  const first = await signed(conn, alice, [parlayIx(1)]);
  const err = await t.throwsAsync(conn.sendRawTransaction(first.raw));
  t.true(err instanceof SendTransactionError);
  t.true((err as SendTransactionError).logs!.some((l) => l.endsWith('exceeded CUs meter at BPF instruction')));

  chain.faults.exhaustCompute();
  const sig = await conn.sendRawTransaction(first.raw, { skipPreflight: true });
  const failed = await conn.getTransaction(sig, { maxSupportedTransactionVersion: 0 });
  t.deepEqual(failed!.meta!.err, { InstructionError: [0, 'ProgramFailedToComplete'] });
  t.is(chain.readParlay(1), null);

  // a new transaction (the fault was used up) succeeds
  const retry = await signed(conn, alice, [ComputeBudgetProgram.setComputeUnitLimit({ units: 400_000 }), parlayIx(1)]);
  const sig2 = await conn.sendRawTransaction(retry.raw);
  await conn.confirmTransaction({ signature: sig2, blockhash: retry.blockhash, lastValidBlockHeight: retry.lastValidBlockHeight });
  t.is(chain.readParlay(1)!.stake, 10n * U);
  t.is(chain.faults.stats.exhausted, 2);
});

test('fault: a dropped transaction never lands; sending it again does', async (t) => {
  const { chain, conn, alice } = await setup();
  t.teardown(() => chain.close());
  const bob = Keypair.generate().publicKey;
  chain.faults.dropNext();
  const tx = await signed(conn, alice, [SystemProgram.transfer({ fromPubkey: alice.publicKey, toPubkey: bob, lamports: 1_000_000 })]);
  const sig = await conn.sendRawTransaction(tx.raw);
  chain.advanceSlots(3);
  t.is((await conn.getSignatureStatus(sig)).value, null);
  t.is(await conn.getBalance(bob), 0);
  t.is(await conn.sendRawTransaction(tx.raw), sig);
  t.is((await conn.getSignatureStatus(sig)).value?.confirmationStatus, 'finalized');
  t.is(await conn.getBalance(bob), 1_000_000);
});

test('fault: a stuck transaction stays pending until its blockhash expires, then never lands', async (t) => {
  const { chain, conn, alice } = await setup();
  t.teardown(() => chain.close());
  const bob = Keypair.generate().publicKey;
  chain.faults.stickNext();
  const tx = await signed(conn, alice, [SystemProgram.transfer({ fromPubkey: alice.publicKey, toPubkey: bob, lamports: 1_000_000 })]);
  const sig = await conn.sendRawTransaction(tx.raw);
  t.deepEqual(chain.chain.stuckSignatures(), [sig]);
  t.is(await conn.sendRawTransaction(tx.raw), sig); // rebroadcast does not help
  t.is((await conn.getSignatureStatus(sig)).value, null);
  const confirming = conn.confirmTransaction({ signature: sig, blockhash: tx.blockhash, lastValidBlockHeight: tx.lastValidBlockHeight });
  chain.advanceSlots(BLOCKHASH_VALID_SLOTS + 1);
  await t.throwsAsync(confirming, { instanceOf: TransactionExpiredBlockheightExceededError });
  t.deepEqual(chain.chain.stuckSignatures(), []);
  const expired = await t.throwsAsync(conn.sendRawTransaction(tx.raw));
  t.regex(expired!.message, /Blockhash not found/);
  t.is(await conn.getBalance(bob), 0);
});

test('fault: RPC errors and hangs for the next calls', async (t) => {
  const chain = await startLocalChain();
  t.teardown(() => chain.close());
  const conn = chain.connection();
  const who = Keypair.generate().publicKey;

  chain.faults.rpcError({ method: 'getBalance', count: 2, code: -32005, message: 'Node is behind' });
  t.is((await conn.getSlot()) > 0, true); // other methods are unaffected
  for (let i = 0; i < 2; i++) {
    const e = await t.throwsAsync(conn.getBalance(who));
    t.regex(e!.message, /Node is behind/);
  }
  t.is(await conn.getBalance(who), 0);

  chain.faults.rpcError({ httpStatus: 503, message: 'busy' });
  const res = await fetch(chain.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getSlot' }),
  });
  t.is(res.status, 503);

  chain.faults.rpcHang({ method: 'getSlot' });
  const hung = fetch(chain.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    signal: AbortSignal.timeout(300),
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getSlot' }),
  });
  await t.throwsAsync(hung, { name: 'TimeoutError' });
  t.is(typeof (await conn.getSlot()), 'number');

  chain.faults.rpcHang({ ms: 150 });
  const started = Date.now();
  await conn.getSlot();
  t.true(Date.now() - started >= 140);

  chain.faults.rpcError({ count: 5 });
  chain.faults.reset();
  t.is(typeof (await conn.getSlot()), 'number');
});
