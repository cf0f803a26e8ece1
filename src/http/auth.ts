// Platform JWT (HS256; claims sub, wallet, is_superuser, exp) and the webhook's shared secret.
import { createHash, createSecretKey, timingSafeEqual } from 'node:crypto';
import jwt from 'koa-jwt';
import type { Context, Next } from 'koa';
import { HttpError } from './errors.ts';
import { platformClaims, type PlatformUser } from '../platform-user.ts';

export { platformClaims, type PlatformUser } from '../platform-user.ts';

/** Verifies the bearer token and puts the checked claims in ctx.state.user. */
export function platformAuth(secret: string, onUser?: (u: PlatformUser) => Promise<void> | void) {
  // A KeyObject made once: jsonwebtoken would otherwise build one from the string on every request.
  const verify = jwt({ secret: createSecretKey(Buffer.from(secret, 'utf8')) as any, algorithms: ['HS256'], key: 'jwt' });
  // Tokens already verified, with their checked claims: a client polls with the same token, and the
  // same string carries the same signature. Only the expiry is checked again.
  const verified = new Map<string, PlatformUser>();
  return async (ctx: Context, next: Next) => {
    const header = ctx.get('authorization');
    const known = header.startsWith('Bearer ') ? verified.get(header) : undefined;
    if (known && known.exp * 1000 > Date.now()) {
      ctx.state.user = known;
      await onUser?.(known);
      return next();
    }
    await verify(ctx, async () => {
      const parsed = platformClaims.safeParse(ctx.state.jwt);
      if (!parsed.success) {
        const noExp = ctx.state.jwt && typeof ctx.state.jwt === 'object' && ctx.state.jwt.exp === undefined;
        throw new HttpError(401, 'unauthorized', noExp ? 'the token has no exp claim' : 'token claims are invalid');
      }
      ctx.state.user = parsed.data;
      if (header.startsWith('Bearer ')) {
        if (verified.size >= 20_000) verified.clear();
        verified.set(header, parsed.data);
      }
      await onUser?.(parsed.data);
      await next();
    });
  };
}

export async function requireSuperuser(ctx: Context, next: Next) {
  if (!ctx.state.user?.is_superuser) throw new HttpError(403, 'forbidden', 'superuser required');
  await next();
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Constant-time comparison of the bare Authorization value with the configured secret. */
export function webhookAuth(secret: string | undefined) {
  return async (ctx: Context, next: Next) => {
    if (!secret) throw new HttpError(503, 'webhook_not_configured', 'PARLAY_WEBHOOK_AUTH_SECRET is not set');
    const given = ctx.get('authorization');
    if (!timingSafeEqual(digest(given), digest(secret))) throw new HttpError(403, 'forbidden', 'webhook secret mismatch');
    await next();
  };
}
