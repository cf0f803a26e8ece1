// Domain errors: what a use case says went wrong, in its own words (a `code` clients match on, a
// message) and a `kind` that says what sort of failure it is. The use cases know nothing of HTTP;
// the front door maps kinds to statuses (src/http/errors.ts).
export type ErrorKind =
  | 'invalid' // the request cannot be carried out as given
  | 'unauthorized' // who is asking is not established
  | 'forbidden' // who is asking may not do this
  | 'not_found' // what it names does not exist
  | 'conflict' // the state does not allow it now (retrying as is will not help)
  | 'unavailable' // a dependency or a precondition is not there yet: retry later
  | 'upstream'; // a dependency answered with a failure (the chain's RPC)

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export const invalid = (code: string, message: string, extra?: Record<string, unknown>) => new DomainError('invalid', code, message, extra);
export const notFound = (message = 'not found', code = 'not_found') => new DomainError('not_found', code, message);
export const conflict = (code: string, message: string) => new DomainError('conflict', code, message);
export const unavailable = (code: string, message: string, extra?: Record<string, unknown>) =>
  new DomainError('unavailable', code, message, extra);
export const upstream = (code: string, message: string) => new DomainError('upstream', code, message);
