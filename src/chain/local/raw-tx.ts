// A landed transaction in the RPC's getTransaction shapes and as a raw-transaction webhook payload.
import bs58 from 'bs58';
import type { TxRecord } from './ledger.ts';

export type TxEncoding = 'json' | 'jsonParsed' | 'base64' | 'base58';

function metaJson(rec: TxRecord, parsed: boolean) {
  const r = rec.result;
  const keys = rec.tx.message.staticAccountKeys.map((k) => k.toBase58());
  const inner = r.innerInstructions.map((g) => ({
    index: g.index,
    instructions: g.instructions.map((ix) =>
      parsed
        ? { programId: keys[ix.programIdIndex], accounts: ix.accounts.map((a) => keys[a]), data: ix.data, stackHeight: ix.stackHeight }
        : ix,
    ),
  }));
  return {
    err: r.err,
    status: r.err === null ? { Ok: null } : { Err: r.err },
    fee: Number(r.fee),
    preBalances: r.preBalances,
    postBalances: r.postBalances,
    innerInstructions: inner,
    logMessages: r.logs,
    preTokenBalances: r.preTokenBalances,
    postTokenBalances: r.postTokenBalances,
    rewards: [],
    loadedAddresses: { writable: [], readonly: [] },
    computeUnitsConsumed: r.unitsConsumed,
  };
}

function messageJson(rec: TxRecord, parsed: boolean) {
  const m = rec.tx.message;
  const keys = m.staticAccountKeys.map((k) => k.toBase58());
  const base = {
    header: m.header,
    recentBlockhash: m.recentBlockhash,
    ...(rec.tx.version === 0 ? { addressTableLookups: [] } : {}),
  };
  if (parsed) {
    return {
      ...base,
      accountKeys: keys.map((pubkey, i) => ({
        pubkey,
        signer: m.isAccountSigner(i),
        writable: m.isAccountWritable(i),
        source: 'transaction',
      })),
      instructions: m.compiledInstructions.map((ci) => ({
        programId: keys[ci.programIdIndex],
        accounts: ci.accountKeyIndexes.map((a) => keys[a]),
        data: bs58.encode(ci.data),
        stackHeight: null,
      })),
    };
  }
  return {
    ...base,
    accountKeys: keys,
    instructions: m.compiledInstructions.map((ci) => ({
      programIdIndex: ci.programIdIndex,
      accounts: ci.accountKeyIndexes,
      data: bs58.encode(ci.data),
      stackHeight: null,
    })),
  };
}

/** getTransaction's result for a landed transaction. */
export function transactionJson(rec: TxRecord, encoding: TxEncoding = 'json') {
  const signatures = rec.tx.signatures.map((s) => bs58.encode(s));
  let transaction: unknown;
  if (encoding === 'base64') transaction = [Buffer.from(rec.tx.serialize()).toString('base64'), 'base64'];
  else if (encoding === 'base58') transaction = [bs58.encode(rec.tx.serialize()), 'base58'];
  else transaction = { signatures, message: messageJson(rec, encoding === 'jsonParsed') };
  return {
    slot: rec.slot,
    blockTime: rec.blockTime,
    meta: metaJson(rec, encoding === 'jsonParsed'),
    transaction,
    version: rec.tx.version,
  };
}

/** The raw-transaction webhook payload of one transaction (the fixtures' shape). */
export function webhookTransaction(rec: TxRecord) {
  const { slot, blockTime, meta, transaction, version } = transactionJson(rec, 'json');
  return { blockTime, indexWithinBlock: rec.indexWithinBlock, slot, meta, transaction, version };
}
