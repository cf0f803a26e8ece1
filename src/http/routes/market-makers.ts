// The market makers' area (SPEC 4.2/4.3): mint_tokens and merge_tokens as REST operations, served
// only when same-side matching is off (CLOB_ENABLE_MINT_MERGE_MATCHING=0); 404 otherwise.
//   POST /v1/market-makers/mint  { market: <condition id>, amount: "<micro-units>" }
//   POST /v1/market-makers/merge { market, amount }
// Bearer auth; the wallet is the token's. Answer { success, operation, market, amount, transaction_hash }.
import Router from '@koa/router';
import { mintMergeBody, mintMergeResult } from '../../api/market-makers.ts';
import { HttpError, notFound, zodMessage } from '../errors.ts';
import { documentRoutes, errorBody } from '../openapi.ts';
import { clobAuth } from './clob-auth.ts';
import type { ClobTokens } from '../../clob/sign-in.ts';
import type { MintMerge } from '../../settlement/mint-merge.ts';
import type { Edge } from '../edge.ts';

export { mintMergeBody, mintMergeResult };

export function marketMakerRoutes(o: { tokens: ClobTokens; mintMerge: MintMerge; enabled: boolean; edge: Edge }) {
  const r = new Router({ prefix: '/v1/market-makers' });
  const auth = clobAuth(o.tokens, o.edge);
  const gate = async (_ctx: unknown, next: () => Promise<unknown>) => {
    if (!o.enabled) throw notFound('the market makers area is served only when CLOB_ENABLE_MINT_MERGE_MATCHING=0');
    await next();
  };
  for (const op of ['mint', 'merge'] as const) {
    r.post(`/${op}`, gate, auth, o.edge.body, async (ctx) => {
      const b = mintMergeBody.safeParse(ctx.request.body ?? {});
      if (!b.success) throw new HttpError(400, 'invalid_request', zodMessage(b.error));
      ctx.body = await o.mintMerge.run(ctx.state.wallet as string, op, b.data.market, b.data.amount);
    });
  }
  return r;
}

documentRoutes(
  ...(['mint', 'merge'] as const).map((op) => ({
    method: 'post' as const,
    path: `/v1/market-makers/${op}`,
    security: 'clob' as const,
    summary: op === 'mint' ? 'mint_tokens: n collateral → n YES + n NO' : 'merge_tokens: n YES + n NO → n collateral',
    description: `SPEC 4.3, no fee, no counterparty: one on-chain transaction signed by the settlement delegate under the caller's allowances. Served only when CLOB_ENABLE_MINT_MERGE_MATCHING=0 (404 otherwise). What it spends is reserved while it runs: an amount above the unreserved balance answers 400 INSUFFICIENT_BALANCE; a missing allowance 400 allowance.`,
    body: mintMergeBody,
    responses: {
      200: { description: 'the confirmed transaction', schema: mintMergeResult },
      404: { description: 'same-side matching is on, or no such market', schema: errorBody },
    },
  })),
);
