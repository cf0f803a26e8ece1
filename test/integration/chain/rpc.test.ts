// The local chain's JSON-RPC endpoint through @solana/web3.js and @solana/spl-token, unchanged.
import test from 'ava';
import {
  ComputeBudgetProgram,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SendTransactionError,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
  sendAndConfirmTransaction,
} from '@solana/web3.js';
import { approve, getAccount, revoke, transfer } from '@solana/spl-token';
import { startLocalChain, BLOCKHASH_VALID_SLOTS } from '../../../src/chain/local/index.ts';

async function rpc(url: string, body: unknown) {
  const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  return res.json() as Promise<any>;
}

test('spl-token approve, delegatedAmount, revoke and balances through a Connection', async (t) => {
  const chain = await startLocalChain();
  t.teardown(() => chain.close());
  const boot = await chain.bootstrap();
  const conn = chain.connection();
  const alice = Keypair.generate();
  const sig = await conn.requestAirdrop(alice.publicKey, 2 * LAMPORTS_PER_SOL);
  await conn.confirmTransaction({ signature: sig, ...(await conn.getLatestBlockhash()) });
  t.is(await conn.getBalance(alice.publicKey), 2 * LAMPORTS_PER_SOL);
  const ata = await chain.fundWallet(alice.publicKey, 0n, 50_000_000n);
  const delegate = Keypair.generate();

  await approve(conn, alice, ata, delegate.publicKey, alice, 12_345_678n);
  let acc = await getAccount(conn, ata);
  t.true(acc.delegate?.equals(delegate.publicKey));
  t.is(acc.delegatedAmount, 12_345_678n);
  t.is(acc.amount, 50_000_000n);

  await revoke(conn, alice, ata, alice);
  acc = await getAccount(conn, ata);
  t.is(acc.delegate, null);
  t.is(acc.delegatedAmount, 0n);

  const bal = await conn.getTokenAccountBalance(ata);
  t.deepEqual(bal.value, { amount: '50000000', decimals: 6, uiAmount: 50, uiAmountString: '50' });
  const parsed = await conn.getParsedAccountInfo(ata);
  t.like(parsed.value?.data, { program: 'spl-token', parsed: { type: 'account', info: { mint: boot.collateralMint.toBase58() } } });

  // a transfer with spl-token moves real balances
  const bob = Keypair.generate();
  const bobAta = await chain.fundWallet(bob.publicKey, 0n, 0n);
  await transfer(conn, alice, ata, bobAta, alice, 7_000_000n);
  t.is((await getAccount(conn, bobAta)).amount, 7_000_000n);
  t.is((await getAccount(conn, ata)).amount, 43_000_000n);
});

test('send and confirm a transaction; getTransaction and getSignaturesForAddress', async (t) => {
  const chain = await startLocalChain();
  t.teardown(() => chain.close());
  const conn = chain.connection();
  const alice = Keypair.generate();
  const bob = Keypair.generate().publicKey;
  chain.dev.airdrop(alice.publicKey, BigInt(LAMPORTS_PER_SOL));
  const sigs: string[] = [];
  for (let i = 0; i < 3; i++) {
    const tx = new Transaction().add(
      ComputeBudgetProgram.setComputeUnitLimit({ units: 10_000 }),
      ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 1_000_000 }),
      SystemProgram.transfer({ fromPubkey: alice.publicKey, toPubkey: bob, lamports: 1_000_000 + i }),
    );
    sigs.push(await sendAndConfirmTransaction(conn, tx, [alice]));
  }
  t.is(await conn.getBalance(bob), 3_000_003);
  const got = await conn.getTransaction(sigs[0], { maxSupportedTransactionVersion: 0, commitment: 'confirmed' });
  t.truthy(got);
  t.is(got!.meta!.err, null);
  t.is(got!.meta!.fee, 5000 + 10_000); // signature + ceil(1e6 µlamports × 10_000 CU / 1e6)
  t.is(got!.transaction.signatures[0], sigs[0]);
  t.true(got!.meta!.logMessages!.includes('Program 11111111111111111111111111111111 success'));
  t.is(typeof got!.blockTime, 'number');
  t.true(got!.slot > 0);

  const statuses = await conn.getSignatureStatuses(sigs);
  t.true(statuses.value.every((s) => s?.confirmationStatus === 'finalized' && s.err === null));

  const all = await conn.getSignaturesForAddress(bob);
  t.deepEqual(
    all.map((s) => s.signature),
    [...sigs].reverse(),
  );
  t.deepEqual(
    (await conn.getSignaturesForAddress(bob, { limit: 1 })).map((s) => s.signature),
    [sigs[2]],
  );
  t.deepEqual(
    (await conn.getSignaturesForAddress(bob, { before: sigs[2] })).map((s) => s.signature),
    [sigs[1], sigs[0]],
  );
  t.deepEqual(
    (await conn.getSignaturesForAddress(bob, { until: sigs[0] })).map((s) => s.signature),
    [sigs[2], sigs[1]],
  );

  // v0 transaction with base58 encoding
  const { blockhash } = await conn.getLatestBlockhash();
  const v0 = new VersionedTransaction(
    new TransactionMessage({
      payerKey: alice.publicKey,
      recentBlockhash: blockhash,
      instructions: [SystemProgram.transfer({ fromPubkey: alice.publicKey, toPubkey: bob, lamports: 5 })],
    }).compileToV0Message(),
  );
  v0.sign([alice]);
  const b58 = (await import('bs58')).default.encode(v0.serialize());
  const sent = await rpc(chain.url, { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [b58] });
  t.is(typeof sent.result, 'string');
  const noVersion = await rpc(chain.url, { jsonrpc: '2.0', id: 2, method: 'getTransaction', params: [sent.result, { encoding: 'json' }] });
  t.is(noVersion.error.code, -32015);
  const v0got = await conn.getTransaction(sent.result, { maxSupportedTransactionVersion: 0 });
  t.is(v0got?.version, 0);
});

test('preflight failure has a validator error shape; expired blockhash; fee for message; simulate', async (t) => {
  const chain = await startLocalChain();
  t.teardown(() => chain.close());
  const conn = chain.connection();
  const alice = Keypair.generate();
  chain.dev.airdrop(alice.publicKey, 10_000_000n);
  const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash();
  t.is(lastValidBlockHeight, (await conn.getBlockHeight()) + BLOCKHASH_VALID_SLOTS);
  const tx = new Transaction({ feePayer: alice.publicKey, blockhash, lastValidBlockHeight }).add(
    SystemProgram.transfer({ fromPubkey: alice.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 50_000_000 }),
  );
  tx.sign(alice);
  const err = await t.throwsAsync(conn.sendRawTransaction(tx.serialize()));
  t.true(err instanceof SendTransactionError);
  t.regex(err!.message, /Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1/);
  t.true((err as SendTransactionError).logs!.some((l) => l.includes('insufficient lamports')));

  const sim = await conn.simulateTransaction(tx);
  t.deepEqual(sim.value.err, { InstructionError: [0, { Custom: 1 }] });
  t.is(await conn.getBalance(alice.publicKey), 10_000_000); // simulation and preflight change nothing

  const fee = await conn.getFeeForMessage(tx.compileMessage());
  t.is(fee.value, 5000);

  chain.advanceSlots(BLOCKHASH_VALID_SLOTS + 1);
  const ok = new Transaction({ feePayer: alice.publicKey, blockhash, lastValidBlockHeight }).add(
    SystemProgram.transfer({ fromPubkey: alice.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1000 }),
  );
  ok.sign(alice);
  const expired = await t.throwsAsync(conn.sendRawTransaction(ok.serialize()));
  t.regex(expired!.message, /Blockhash not found/);
  t.false((await conn.isBlockhashValid(blockhash)).value);
  t.is((await conn.getFeeForMessage(ok.compileMessage())).value, null);
  // with skipPreflight the transaction is accepted and never lands
  const sig = await conn.sendRawTransaction(ok.serialize(), { skipPreflight: true });
  t.is((await conn.getSignatureStatus(sig)).value, null);

  // a bad signature
  const forged = new Transaction({
    feePayer: alice.publicKey,
    blockhash: (await conn.getLatestBlockhash()).blockhash,
    lastValidBlockHeight,
  }).add(SystemProgram.transfer({ fromPubkey: alice.publicKey, toPubkey: alice.publicKey, lamports: 1 }));
  forged.sign(alice);
  const raw = forged.serialize();
  raw[5] ^= 0xff;
  const bad = await rpc(chain.url, {
    jsonrpc: '2.0',
    id: 1,
    method: 'sendTransaction',
    params: [raw.toString('base64'), { encoding: 'base64' }],
  });
  t.is(bad.error.code, -32003);
});

test('JSON-RPC envelope: batch, unknown method, parse error, misc methods', async (t) => {
  const chain = await startLocalChain();
  t.teardown(() => chain.close());
  const batch = await rpc(chain.url, [
    { jsonrpc: '2.0', id: 1, method: 'getHealth' },
    { jsonrpc: '2.0', id: 2, method: 'nope' },
    { jsonrpc: '2.0', id: 3, method: 'getSlot' },
  ]);
  t.is(batch[0].result, 'ok');
  t.deepEqual(batch[1].error, { code: -32601, message: 'Method not found' });
  t.is(typeof batch[2].result, 'number');
  const res = await fetch(chain.url, { method: 'POST', body: '{' });
  t.is(((await res.json()) as any).error.code, -32700);
  const conn = chain.connection();
  t.is(typeof (await conn.getGenesisHash()), 'string');
  t.is((await conn.getVersion())['solana-core'], '2.2.0');
  t.true((await conn.getMinimumBalanceForRentExemption(165)) > 0);
  const info = await conn.getAccountInfo(new PublicKey('7huqBGibCJTN7mPZhTPs4yaFePGwCuMRH6ASYGDJMbjo'));
  t.true(info?.executable);
  const epoch = await conn.getEpochInfo();
  t.is(epoch.absoluteSlot, await conn.getSlot());
  const before = await conn.getSlot();
  chain.advanceSlots(5);
  t.is(await conn.getSlot(), before + 5);
});

test('slot timer: transactions share slots with increasing indexWithinBlock', async (t) => {
  const chain = await startLocalChain({ slotMs: 60_000 });
  t.teardown(() => chain.close());
  const alice = Keypair.generate();
  const s1 = chain.dev.airdrop(alice.publicKey, 1_000_000n);
  const s2 = chain.dev.airdrop(alice.publicKey, 1_000_000n);
  const r1 = chain.chain.ledger.get(s1)!;
  const r2 = chain.chain.ledger.get(s2)!;
  t.is(r1.slot, r2.slot);
  t.is(r2.indexWithinBlock, r1.indexWithinBlock + 1);
});

test('getBlock and getBlockTime of a landed transaction', async (t) => {
  const chain = await startLocalChain();
  t.teardown(() => chain.close());
  const conn = chain.connection();
  const sig = chain.dev.airdrop(Keypair.generate().publicKey, 1_000_000n);
  const status = (await conn.getSignatureStatus(sig)).value!;
  const block = await conn.getBlock(status.slot, { maxSupportedTransactionVersion: 0 });
  t.is(block!.transactions[0].transaction.signatures[0], sig);
  t.is(block!.parentSlot, status.slot - 1);
  t.is(await conn.getBlockTime(status.slot), block!.blockTime);
  await t.throwsAsync(conn.getBlock(status.slot + 10));
});
