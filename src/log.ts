// Structured logs (pino) that carry the request id: the front door runs each request inside
// `requestContext`, and a logger made by `createLogger` adds `reqId` to every line written while a
// request is being served, from any module (routes, services, the asker).
import { AsyncLocalStorage } from 'node:async_hooks';
import pino, { type DestinationStream, type Logger } from 'pino';

export interface RequestContext {
  reqId: string;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();

/** pino `mixin`: the current request's id, if any. */
export function requestMixin(): Record<string, unknown> {
  const c = requestContext.getStore();
  return c ? { reqId: c.reqId } : {};
}

export function createLogger(o: { level: string; nodeId: string }, destination?: DestinationStream): Logger {
  return pino({ level: o.level, base: { node: o.nodeId }, mixin: requestMixin }, destination as DestinationStream);
}
