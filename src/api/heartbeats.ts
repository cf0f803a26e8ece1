// Request and answer of the heartbeat routes (cancel-on-disconnect): the HTTP contract the routes
// validate with and the typed client reads.
import { z } from 'zod';

/** Body of POST /v1/heartbeats (optional: no body = a heartbeat that arms the wallet). */
export const heartbeatBody = z
  .strictObject({
    enabled: z.boolean().default(true).meta({ description: 'false opts the wallet out of cancel-on-disconnect' }),
  })
  .meta({ id: 'HeartbeatRequest' });

const ts = z.string().meta({ description: 'ISO 8601 UTC timestamp' });

/** Answer of both heartbeat routes. */
export const heartbeatStatusSchema = z
  .strictObject({
    wallet: z.string(),
    enabled: z.boolean(),
    state: z.enum(['armed', 'expiring', 'expired', 'off']),
    timeout_ms: z.number().int(),
    last_heartbeat_at: ts.nullable(),
    expires_at: ts.nullable().meta({ description: 'when the resting orders are cancelled unless another heartbeat comes' }),
    last_expired_at: ts.nullable(),
    cancelled_at_last_expiry: z.number().int(),
  })
  .meta({ id: 'HeartbeatStatus' });
