// A busy HTTP port, found before the node touches anything: one clear line instead of a raw
// EADDRINUSE stack after migrations ran.
import { createServer } from 'node:net';

export class PortBusy extends Error {
  constructor(
    readonly port: number,
    readonly host: string,
    code: string,
  ) {
    super(
      code === 'EACCES'
        ? `port ${port} on ${host} may not be bound by this user (PORT)`
        : `port ${port} on ${host} is already in use (another node or program listens there; set PORT)`,
    );
  }
}

/** Resolves when `port` can be bound on `host` (port 0 always can); rejects with PortBusy. */
export function assertPortFree(port: number, host: string): Promise<void> {
  if (!port) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (e: NodeJS.ErrnoException) =>
      reject(e.code === 'EADDRINUSE' || e.code === 'EACCES' ? new PortBusy(port, host, e.code) : e),
    );
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/** The listen error of the real server, in the same words. */
export function listenError(e: NodeJS.ErrnoException, port: number, host: string): Error {
  return e.code === 'EADDRINUSE' || e.code === 'EACCES' ? new PortBusy(port, host, e.code) : e;
}
