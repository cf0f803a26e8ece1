// Cancel-on-disconnect heartbeats (issue 8, item 4): `POST /v1/heartbeats` arms the caller's wallet
// (or, with `{ "enabled": false }`, disarms it); `GET /v1/heartbeats` reads its state. The expiry
// itself is src/clob/heartbeats.ts.
import Router from '@koa/router';
import { heartbeatBody, heartbeatStatusSchema } from '../../api/heartbeats.ts';
import { HttpError, zodMessage } from '../errors.ts';
import { clobAuth } from './clob-auth.ts';
import { heartbeatStatus, recordHeartbeat } from '../../clob/heartbeats.ts';
import type { ClobTokens } from '../../clob/sign-in.ts';
import { documentRoutes } from '../openapi.ts';
import type { Edge } from '../edge.ts';

import type { Db } from '../../db.ts';

export { heartbeatBody, heartbeatStatusSchema };

export function heartbeatRoutes(o: { tokens: ClobTokens; db: () => Db; timeoutMs: number; edge: Edge }) {
  const r = new Router({ prefix: '/v1' });
  const auth = clobAuth(o.tokens, o.edge);
  r.post('/heartbeats', auth, o.edge.body, async (ctx) => {
    const b = heartbeatBody.safeParse(ctx.request.body ?? {});
    if (!b.success) throw new HttpError(400, 'invalid_request', zodMessage(b.error));
    ctx.body = await recordHeartbeat(o.db(), ctx.state.wallet as string, o.timeoutMs, b.data.enabled);
  });
  r.get('/heartbeats', auth, async (ctx) => {
    const wallet = ctx.state.wallet as string;
    ctx.body = (await heartbeatStatus(o.db(), wallet)) ?? {
      wallet,
      enabled: false,
      state: 'off',
      timeout_ms: o.timeoutMs,
      last_heartbeat_at: null,
      expires_at: null,
      last_expired_at: null,
      cancelled_at_last_expiry: 0,
    };
  });
  return r;
}

documentRoutes(
  {
    method: 'post',
    path: '/v1/heartbeats',
    security: 'clob',
    summary: 'Heartbeat: arms cancel-on-disconnect for the caller',
    description:
      'The first heartbeat opts the wallet in. If no further heartbeat arrives within CLOB_HEARTBEAT_TIMEOUT_MS, every resting or delayed order of the wallet is cancelled (ledger: order_cancelled, reason heartbeat_timeout) and the wallet is disarmed until its next heartbeat. `{ "enabled": false }` opts out.',
    body: heartbeatBody,
    responses: { 200: { description: 'the heartbeat state', schema: heartbeatStatusSchema } },
  },
  {
    method: 'get',
    path: '/v1/heartbeats',
    security: 'clob',
    summary: "The caller's heartbeat state",
    responses: { 200: { description: 'the heartbeat state', schema: heartbeatStatusSchema } },
  },
);
