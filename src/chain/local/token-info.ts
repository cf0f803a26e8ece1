// SPL Token accounts as the RPC shows them: UI amounts, token balances of a transaction, and the
// jsonParsed form of token accounts and mints.
import type { PublicKey } from '@solana/web3.js';
import { ACCOUNT_SIZE, AccountLayout, MINT_SIZE, MintLayout, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import type { AccountState, SvmAccess } from './svm-access.ts';

export interface UiTokenAmount {
  amount: string;
  decimals: number;
  uiAmount: number | null;
  uiAmountString: string;
}
export interface TokenBalance {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: UiTokenAmount;
}

export function uiTokenAmount(amount: bigint, decimals: number): UiTokenAmount {
  const scale = 10n ** BigInt(decimals);
  const whole = amount / scale;
  const frac = (amount % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  const s = frac ? `${whole}.${frac}` : whole.toString();
  return { amount: amount.toString(), decimals, uiAmount: Number(s), uiAmountString: s };
}

export function isTokenAccount(acc: AccountState | null): acc is AccountState {
  return !!acc && acc.owner.equals(TOKEN_PROGRAM_ID) && acc.data.length === ACCOUNT_SIZE;
}

export function isMint(acc: AccountState | null): acc is AccountState {
  return !!acc && acc.owner.equals(TOKEN_PROGRAM_ID) && acc.data.length === MINT_SIZE;
}

/** Amount held by a token account (0 when it is not one). */
export function tokenBalanceOf(svm: SvmAccess, account: PublicKey): bigint {
  const acc = svm.get(account);
  return isTokenAccount(acc) ? AccountLayout.decode(acc.data).amount : 0n;
}

export function mintDecimals(svm: SvmAccess, mint: PublicKey): number {
  const acc = svm.get(mint);
  return isMint(acc) ? MintLayout.decode(acc.data).decimals : 0;
}

/** Token balances of the token accounts among `accounts` (indexed like the message's keys). */
export function tokenBalances(svm: SvmAccess, accounts: (AccountState | null)[]): TokenBalance[] {
  const out: TokenBalance[] = [];
  accounts.forEach((acc, accountIndex) => {
    if (!isTokenAccount(acc)) return;
    const t = AccountLayout.decode(acc.data);
    out.push({
      accountIndex,
      mint: t.mint.toBase58(),
      owner: t.owner.toBase58(),
      programId: TOKEN_PROGRAM_ID.toBase58(),
      uiTokenAmount: uiTokenAmount(t.amount, mintDecimals(svm, t.mint)),
    });
  });
  return out;
}

const STATES = ['uninitialized', 'initialized', 'frozen'];

/** jsonParsed data of a token account or mint, or null for other accounts. */
export function parsedTokenData(svm: SvmAccess, acc: AccountState | null): object | null {
  if (isTokenAccount(acc)) {
    const t = AccountLayout.decode(acc.data);
    const decimals = mintDecimals(svm, t.mint);
    const info: Record<string, unknown> = {
      isNative: t.isNative !== 0n,
      mint: t.mint.toBase58(),
      owner: t.owner.toBase58(),
      state: STATES[t.state] ?? 'initialized',
      tokenAmount: uiTokenAmount(t.amount, decimals),
    };
    if (t.delegateOption) {
      info.delegate = t.delegate.toBase58();
      info.delegatedAmount = uiTokenAmount(t.delegatedAmount, decimals);
    }
    if (t.closeAuthorityOption) info.closeAuthority = t.closeAuthority.toBase58();
    return { program: 'spl-token', parsed: { type: 'account', info }, space: ACCOUNT_SIZE };
  }
  const mint = acc as AccountState | null;
  if (isMint(mint)) {
    const m = MintLayout.decode(mint.data);
    return {
      program: 'spl-token',
      parsed: {
        type: 'mint',
        info: {
          decimals: m.decimals,
          freezeAuthority: m.freezeAuthorityOption ? m.freezeAuthority.toBase58() : null,
          isInitialized: m.isInitialized,
          mintAuthority: m.mintAuthorityOption ? m.mintAuthority.toBase58() : null,
          supply: m.supply.toString(),
        },
      },
      space: MINT_SIZE,
    };
  }
  return null;
}
