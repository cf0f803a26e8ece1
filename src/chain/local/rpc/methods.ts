// The JSON-RPC methods of the local chain, with a validator's request and response shapes.
import { PublicKey, VersionedMessage } from '@solana/web3.js';
import { AccountLayout, MintLayout, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import bs58 from 'bs58';
import { Chain } from '../chain.ts';
import { readBudget, transactionFee } from '../compute-budget.ts';
import { verifySignatures } from '../executor.ts';
import { transactionJson, type TxEncoding } from '../raw-tx.ts';
import { isMint, isTokenAccount, uiTokenAmount, mintDecimals } from '../token-info.ts';
import { accountJson, matchesFilters, type AccountConfig, type ProgramAccountsFilter } from './account-json.ts';
import { RpcError, RPC_BLOCK_NOT_AVAILABLE, RPC_INVALID_PARAMS, RPC_UNSUPPORTED_TX_VERSION } from './rpc-error.ts';

export type RpcMethod = (params: unknown[]) => unknown;

const CORE_VERSION = '2.2.0';
const FEATURE_SET = 3294202862;

function pubkey(v: unknown): PublicKey {
  try {
    return new PublicKey(v as string);
  } catch {
    throw new RpcError(RPC_INVALID_PARAMS, 'Invalid param: Invalid');
  }
}

function decodeWire(v: unknown, encoding: string | undefined): Buffer {
  if (typeof v !== 'string') throw new RpcError(RPC_INVALID_PARAMS, 'Invalid params: expected an encoded transaction');
  if ((encoding ?? 'base58') === 'base64') return Buffer.from(v, 'base64');
  if (encoding && encoding !== 'base58') throw new RpcError(RPC_INVALID_PARAMS, `unsupported encoding: ${encoding}`);
  try {
    return Buffer.from(bs58.decode(v));
  } catch {
    throw new RpcError(RPC_INVALID_PARAMS, 'invalid base58 encoding');
  }
}

export function createMethods(chain: Chain): Record<string, RpcMethod> {
  const { svm, ledger } = chain;
  const context = () => ({ apiVersion: CORE_VERSION, slot: ledger.slot });
  const withContext = (value: unknown) => ({ context: context(), value });
  const cfg = <T>(params: unknown[], i: number): T => (params[i] ?? {}) as T;

  const signatureStatus = (sig: string) => {
    const rec = ledger.get(sig);
    if (!rec) return null;
    const err = rec.result.err;
    return {
      slot: rec.slot,
      confirmations: null,
      err,
      status: err === null ? { Ok: null } : { Err: err },
      confirmationStatus: 'finalized',
    };
  };

  const simulate = (params: unknown[]) => {
    const c = cfg<{
      encoding?: string;
      sigVerify?: boolean;
      replaceRecentBlockhash?: boolean;
      innerInstructions?: boolean;
      accounts?: { addresses: string[]; encoding?: AccountConfig['encoding'] };
    }>(params, 1);
    if (c.sigVerify && c.replaceRecentBlockhash)
      throw new RpcError(RPC_INVALID_PARAMS, 'sigVerify may not be used with replaceRecentBlockhash');
    const tx = Chain.parse(decodeWire(params[0], c.encoding));
    const empty = {
      accounts: null,
      err: null as unknown,
      innerInstructions: null,
      logs: [] as string[],
      replacementBlockhash: null as unknown,
      returnData: null,
      unitsConsumed: 0,
    };
    if (c.sigVerify && !verifySignatures(tx)) return withContext({ ...empty, err: 'SignatureFailure' });
    if (!c.replaceRecentBlockhash && !ledger.isBlockhashValid(tx.message.recentBlockhash))
      return withContext({ ...empty, err: 'BlockhashNotFound' });
    const returnAccounts = c.accounts?.addresses.map(pubkey);
    const res = chain.executor.execute(tx, { simulate: true, sigVerify: false, clock: ledger.clock(), returnAccounts });
    return withContext({
      accounts: res.returnedAccounts
        ? res.returnedAccounts.map((a) => accountJson(svm, a, { encoding: c.accounts?.encoding ?? 'base64' }))
        : null,
      err: res.err,
      fee: Number(res.fee),
      innerInstructions: c.innerInstructions ? res.innerInstructions : null,
      loadedAccountsDataSize: 0,
      logs: res.logs,
      replacementBlockhash: c.replaceRecentBlockhash ? ledger.latestBlockhash() : null,
      returnData: null,
      unitsConsumed: res.unitsConsumed,
    });
  };

  return {
    getHealth: () => 'ok',
    getVersion: () => ({ 'solana-core': CORE_VERSION, 'feature-set': FEATURE_SET }),
    getGenesisHash: () => ledger.genesisHash,
    getIdentity: () => ({ identity: chain.faucet.publicKey.toBase58() }),
    getSlot: () => ledger.slot,
    getBlockHeight: () => ledger.slot,
    getTransactionCount: () => ledger.transactionCount,
    getFirstAvailableBlock: () => 0,
    getEpochInfo: () => ledger.epochInfo(),
    getEpochSchedule: () => ({
      firstNormalEpoch: 0,
      firstNormalSlot: 0,
      leaderScheduleSlotOffset: 432000,
      slotsPerEpoch: 432000,
      warmup: false,
    }),
    getLatestBlockhash: () => withContext(ledger.latestBlockhash()),
    getRecentBlockhash: () => withContext({ blockhash: ledger.latestBlockhash().blockhash, feeCalculator: { lamportsPerSignature: 5000 } }),
    isBlockhashValid: (p) => withContext(ledger.isBlockhashValid(String(p[0]))),
    getRecentPrioritizationFees: () => [],
    getMinimumBalanceForRentExemption: (p) => Number(svm.rentExempt(Number(p[0] ?? 0))),
    getFeeForMessage: (p) => {
      let msg: VersionedMessage;
      try {
        msg = VersionedMessage.deserialize(Buffer.from(String(p[0]), 'base64'));
      } catch {
        throw new RpcError(RPC_INVALID_PARAMS, 'invalid message');
      }
      if (!ledger.isBlockhashValid(msg.recentBlockhash)) return withContext(null);
      const keys = msg.staticAccountKeys;
      const budget = readBudget(msg.compiledInstructions.map((ci) => ({ programId: keys[ci.programIdIndex], data: Buffer.from(ci.data) })));
      if (typeof budget !== 'object' || !('limit' in budget)) return withContext(null);
      return withContext(Number(transactionFee(msg.header.numRequiredSignatures, budget)));
    },
    getBalance: (p) => withContext(Number(svm.lamports(pubkey(p[0])))),
    getAccountInfo: (p) => withContext(accountJson(svm, svm.get(pubkey(p[0])), cfg<AccountConfig>(p, 1))),
    getMultipleAccounts: (p) => {
      const keys = (p[0] as unknown[] | undefined) ?? [];
      if (keys.length > 100) throw new RpcError(RPC_INVALID_PARAMS, 'Too many inputs provided; max 100');
      return withContext(keys.map((k) => accountJson(svm, svm.get(pubkey(k)), cfg<AccountConfig>(p, 1))));
    },
    getProgramAccounts: (p) => {
      const c = cfg<AccountConfig & { filters?: ProgramAccountsFilter[]; withContext?: boolean }>(p, 1);
      const list = svm.svm
        .getProgramAccounts(pubkey(p[0]).toBase58() as never)
        .map((a) => ({ key: new PublicKey(a.address), acc: svm.get(new PublicKey(a.address)) }))
        .filter((a) => a.acc && matchesFilters(a.acc, c.filters))
        .map((a) => ({ pubkey: a.key.toBase58(), account: accountJson(svm, a.acc, c) }));
      return c.withContext ? withContext(list) : list;
    },
    getTokenAccountsByOwner: (p) => {
      const owner = pubkey(p[0]);
      const filter = (p[1] ?? {}) as { mint?: string; programId?: string };
      if (filter.programId && !pubkey(filter.programId).equals(TOKEN_PROGRAM_ID)) return withContext([]);
      const mint = filter.mint ? pubkey(filter.mint) : undefined;
      const c = cfg<AccountConfig>(p, 2);
      const list = svm.svm
        .getProgramAccounts(TOKEN_PROGRAM_ID.toBase58() as never)
        .map((a) => ({ key: new PublicKey(a.address), acc: svm.get(new PublicKey(a.address)) }))
        .filter(
          ({ acc }) =>
            isTokenAccount(acc) &&
            AccountLayout.decode(acc.data).owner.equals(owner) &&
            (!mint || AccountLayout.decode(acc.data).mint.equals(mint)),
        )
        .map(({ key, acc }) => ({ pubkey: key.toBase58(), account: accountJson(svm, acc, { encoding: 'base64', ...c }) }));
      return withContext(list);
    },
    getTokenAccountBalance: (p) => {
      const acc = svm.get(pubkey(p[0]));
      if (!isTokenAccount(acc)) throw new RpcError(RPC_INVALID_PARAMS, 'Invalid param: not a Token account');
      const t = AccountLayout.decode(acc.data);
      return withContext(uiTokenAmount(t.amount, mintDecimals(svm, t.mint)));
    },
    getTokenSupply: (p) => {
      const acc = svm.get(pubkey(p[0]));
      if (!isMint(acc)) throw new RpcError(RPC_INVALID_PARAMS, 'Invalid param: not a Token mint');
      const m = MintLayout.decode(acc.data);
      return withContext(uiTokenAmount(m.supply, m.decimals));
    },
    requestAirdrop: (p) => chain.airdrop(pubkey(p[0]), BigInt(Number(p[1] ?? 0))),
    sendTransaction: (p) => {
      const c = cfg<{ encoding?: string; skipPreflight?: boolean }>(p, 1);
      return chain.submit(Chain.parse(decodeWire(p[0], c.encoding)), { skipPreflight: c.skipPreflight });
    },
    simulateTransaction: simulate,
    getSignatureStatuses: (p) => withContext(((p[0] as string[] | undefined) ?? []).map((s) => signatureStatus(String(s)))),
    getSignaturesForAddress: (p) => {
      const c = cfg<{ limit?: number; before?: string; until?: string }>(p, 1);
      const limit = Math.min(Math.max(c.limit ?? 1000, 1), 1000);
      let list = ledger.forAddress(pubkey(p[0]));
      if (c.before) {
        const i = list.findIndex((r) => r.signature === c.before);
        list = i >= 0 ? list.slice(i + 1) : [];
      }
      if (c.until) {
        const i = list.findIndex((r) => r.signature === c.until);
        if (i >= 0) list = list.slice(0, i);
      }
      return list.slice(0, limit).map((r) => ({
        signature: r.signature,
        slot: r.slot,
        err: r.result.err,
        memo: null,
        blockTime: r.blockTime,
        confirmationStatus: 'finalized',
      }));
    },
    getBlockTime: (p) => {
      const t = ledger.blockTime(Number(p[0]));
      if (t === undefined) throw new RpcError(RPC_BLOCK_NOT_AVAILABLE, `Block not available for slot ${Number(p[0])}`);
      return t;
    },
    getBlock: (p) => {
      const slot = Number(p[0]);
      const c = cfg<{
        encoding?: TxEncoding;
        transactionDetails?: 'full' | 'signatures' | 'none' | 'accounts';
        maxSupportedTransactionVersion?: number;
      }>(p, 1);
      const blockTime = ledger.blockTime(slot);
      if (slot > ledger.slot || blockTime === undefined)
        throw new RpcError(RPC_BLOCK_NOT_AVAILABLE, `Block not available for slot ${slot}`);
      const recs = ledger.inSlot(slot);
      if (c.maxSupportedTransactionVersion === undefined && recs.some((r) => r.tx.version !== 'legacy')) {
        throw new RpcError(
          RPC_UNSUPPORTED_TX_VERSION,
          'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
        );
      }
      const details = c.transactionDetails ?? 'full';
      const block: Record<string, unknown> = {
        blockHeight: slot,
        blockTime,
        blockhash: ledger.blockhashFor(slot),
        parentSlot: slot - 1,
        previousBlockhash: ledger.blockhashFor(slot - 1),
        rewards: [],
      };
      if (details === 'signatures') block.signatures = recs.map((r) => r.signature);
      else if (details !== 'none')
        block.transactions = recs.map((r) => {
          const { meta, transaction, version } = transactionJson(r, c.encoding ?? 'json');
          return { meta, transaction, version };
        });
      return block;
    },
    getTransaction: (p) => {
      const c = cfg<{ encoding?: TxEncoding; maxSupportedTransactionVersion?: number; commitment?: string }>(p, 1);
      if (c.commitment === 'processed') throw new RpcError(RPC_INVALID_PARAMS, 'Method does not support commitment below `confirmed`');
      const rec = ledger.get(String(p[0]));
      if (!rec) return null;
      if (rec.tx.version !== 'legacy' && c.maxSupportedTransactionVersion === undefined) {
        throw new RpcError(
          RPC_UNSUPPORTED_TX_VERSION,
          'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
        );
      }
      return transactionJson(rec, c.encoding ?? 'json');
    },
  };
}
