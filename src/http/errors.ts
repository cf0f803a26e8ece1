// Error responses: `{ error: <snake_case code>, message }` with the status the spec gives (the
// order book's POST /v1/order answers its rejections as `{ success: false, errorMsg, code }`).
import type { Context, Next } from 'koa';
import { ZodError } from 'zod';
import { zodMessage } from '../zod-message.ts';
import { DomainError, type ErrorKind } from '../errors.ts';

/** The HTTP status of each kind of domain error (src/errors.ts). */
const STATUS: Record<ErrorKind, number> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  unavailable: 503,
  upstream: 502,
};

export const statusOf = (kind: ErrorKind): number => STATUS[kind];

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** An error answered with a body of its own instead of `{ error, message }`. */
export class HttpAnswer extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
    message: string,
  ) {
    super(message);
  }
}

/** Routes whose rejections are `{ success: false, errorMsg, code }` (clob.md: POST /v1/order). */
const ORDER_ROUTE = /^\/v1\/order\/?$/;

/**
 * A refusal at the edge (body too large or malformed, rate limited) in the shape of the route's
 * rejections: `{ error, message }`, or on POST /v1/order `{ success: false, errorMsg, code }` with
 * `orderCode` (INVALID_ORDER unless given).
 */
export function edgeError(
  ctx: Pick<Context, 'method' | 'path'>,
  status: number,
  code: string,
  message: string,
  orderCode = 'INVALID_ORDER',
): Error {
  if (ctx.method === 'POST' && ORDER_ROUTE.test(ctx.path))
    return new HttpAnswer(status, { success: false, errorMsg: message, code: orderCode }, message);
  return new HttpError(status, code, message);
}

export const badRequest = (message: string, code = 'invalid_request') => new HttpError(400, code, message);
export const notFound = (message = 'not found') => new HttpError(404, 'not_found', message);

export { zodMessage } from '../zod-message.ts';

/** An aborted or reset client connection (the body reader's, Node's or a stream's). */
export function isClientGone(err: any): boolean {
  if (!err) return false;
  if (err.clientGone || err.type === 'request.aborted') return true;
  return (
    ['ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE', 'HPE_INVALID_EOF_STATE'].includes(err.code) ||
    err.message === 'request aborted' ||
    err.message === 'aborted'
  );
}

export function errorMiddleware(log: { error(o: object, m?: string): void }) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = { error: 'not_found', message: `no route ${ctx.method} ${ctx.path}` };
      }
    } catch (err: any) {
      if (isClientGone(err)) {
        // Nobody is left to read an answer; the request line says so (at info, without a stack).
        ctx.state.clientGone = err.code ?? err.message;
        ctx.status = 400;
        ctx.body = { error: 'client_gone', message: err.message };
      } else if (err instanceof HttpAnswer) {
        ctx.status = err.status;
        ctx.body = err.body;
      } else if (err instanceof HttpError) {
        ctx.status = err.status;
        ctx.body = { error: err.code, message: err.message, ...err.extra };
      } else if (err instanceof DomainError) {
        ctx.status = statusOf(err.kind);
        ctx.body = { error: err.code, message: err.message, ...err.extra };
      } else if (err instanceof ZodError) {
        ctx.status = 400;
        ctx.body = { error: 'invalid_request', message: zodMessage(err) };
      } else if (err?.status === 401) {
        ctx.status = 401;
        ctx.body = { error: 'unauthorized', message: err.originalError?.message ?? err.message ?? 'authentication required' };
      } else if (
        err?.type === 'entity.parse.failed' ||
        err?.name === 'UnsupportedBodyTypeError' ||
        (err?.status >= 400 && err?.status < 500 && err?.expose)
      ) {
        ctx.status = err.status && err.status < 500 ? err.status : 400;
        ctx.body = { error: err.type === 'entity.parse.failed' ? 'malformed_body' : 'bad_request', message: err.message };
      } else {
        log.error({ err, path: ctx.path }, 'unhandled error');
        ctx.status = 500;
        ctx.body = { error: 'internal_error', message: 'internal error' };
      }
    }
  };
}
