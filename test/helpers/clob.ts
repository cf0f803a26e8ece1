// Order-book test helpers: wallets, sign-in, markets, signed orders.
import { Keypair } from '@solana/web3.js';
import { randomBytes } from 'node:crypto';
import { call, token } from './node.ts';
import { signIn } from '../../src/clob/sign-in.ts';
import { signOrder, type SignedOrder } from '../../src/clob/signed-order.ts';

export const superuser = () => token({ sub: 'root', is_superuser: true });

export async function bearer(base: string, kp: Keypair): Promise<string> {
  const r = await call(base, 'POST', '/v1/auth/token', { body: signIn(kp.publicKey.toBase58(), kp.secretKey) });
  if (r.status !== 200) throw new Error(`sign-in failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.access_token;
}

export function conditionId(): string {
  return `0x${randomBytes(32).toString('hex')}`;
}

export async function createMarket(base: string, over: Record<string, unknown> = {}) {
  const body = {
    condition_id: conditionId(),
    question: 'Will it rain?',
    yes_token_id: Keypair.generate().publicKey.toBase58(),
    no_token_id: Keypair.generate().publicKey.toBase58(),
    tick_size: '0.01',
    min_size: '1',
    taker_fee_bps: 100,
    ...over,
  };
  const r = await call(base, 'POST', '/api/markets/admin/markets/', { token: superuser(), body });
  if (r.status !== 201) throw new Error(`market create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data;
}

const ZERO = '11111111111111111111111111111111';

/** A signed BUY or SELL of `size` tokens at `price` (decimal strings of units, e.g. '0.55', '10'). */
export function order(
  kp: Keypair,
  tokenId: string,
  side: 'BUY' | 'SELL',
  price: string,
  size: string,
  o: { feeRateBps?: number; expiration?: number; salt?: string } = {},
): SignedOrder {
  const micro = (s: string) => {
    const [i, f = ''] = s.split('.');
    return BigInt(i) * 1_000_000n + BigInt(f.padEnd(6, '0'));
  };
  const sz = micro(size);
  const collateral = (micro(price) * sz) / 1_000_000n;
  const maker = kp.publicKey.toBase58();
  return signOrder(
    {
      salt: o.salt ?? BigInt('0x' + randomBytes(6).toString('hex')).toString(),
      maker,
      signer: maker,
      taker: ZERO,
      tokenId,
      makerAmount: (side === 'BUY' ? collateral : sz).toString(),
      takerAmount: (side === 'BUY' ? sz : collateral).toString(),
      side,
      expiration: String(o.expiration ?? 0),
      nonce: '0',
      feeRateBps: String(o.feeRateBps ?? 0),
    },
    kp.secretKey,
  );
}
