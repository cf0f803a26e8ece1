// Accounts in the RPC's encodings (base64, base58, jsonParsed for token accounts and mints).
import bs58 from 'bs58';
import type { AccountState, SvmAccess } from '../svm-access.ts';
import { parsedTokenData } from '../token-info.ts';
import { RpcError, RPC_INVALID_PARAMS } from './rpc-error.ts';

export type AccountEncoding = 'base64' | 'base58' | 'jsonParsed' | 'base64+zstd';
export interface AccountConfig {
  encoding?: AccountEncoding;
  dataSlice?: { offset: number; length: number };
}

// eslint-disable-next-line no-loss-of-precision -- u64::MAX as a validator writes it; JSON readers get the same double
const RENT_EPOCH_MAX = 18446744073709551615;

export function accountJson(svm: SvmAccess, acc: AccountState | null, config: AccountConfig = {}) {
  if (!acc) return null;
  const encoding = config.encoding ?? 'base58';
  let bytes = acc.data;
  if (config.dataSlice) bytes = bytes.subarray(config.dataSlice.offset, config.dataSlice.offset + config.dataSlice.length);
  let data: unknown;
  if (encoding === 'jsonParsed') data = parsedTokenData(svm, acc) ?? [acc.data.toString('base64'), 'base64'];
  else if (encoding === 'base64') data = [bytes.toString('base64'), 'base64'];
  else if (encoding === 'base58') {
    if (bytes.length > 128)
      throw new RpcError(RPC_INVALID_PARAMS, 'Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.');
    data = [bs58.encode(bytes), 'base58'];
  } else throw new RpcError(RPC_INVALID_PARAMS, `unsupported encoding: ${encoding}`);
  return {
    data,
    executable: acc.executable,
    lamports: Number(acc.lamports),
    owner: acc.owner.toBase58(),
    rentEpoch: RENT_EPOCH_MAX,
    space: acc.data.length,
  };
}

export interface ProgramAccountsFilter {
  dataSize?: number;
  memcmp?: { offset: number; bytes: string; encoding?: 'base58' | 'base64' };
}

export function matchesFilters(acc: AccountState, filters: ProgramAccountsFilter[] = []): boolean {
  return filters.every((f) => {
    if (f.dataSize !== undefined) return acc.data.length === f.dataSize;
    if (f.memcmp) {
      const want = f.memcmp.encoding === 'base64' ? Buffer.from(f.memcmp.bytes, 'base64') : Buffer.from(bs58.decode(f.memcmp.bytes));
      return acc.data.subarray(f.memcmp.offset, f.memcmp.offset + want.length).equals(want);
    }
    return true;
  });
}
