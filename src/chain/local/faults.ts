// Fault injection, controlled per test. RPC faults hit the next N calls (optionally of one method);
// transaction faults hit the next N transactions submitted with sendTransaction.
export interface RpcErrorFault {
  /** only calls of this method (default: any) */
  method?: string;
  /** how many calls (default 1) */
  count?: number;
  /** JSON-RPC error code (default -32005, node unhealthy) */
  code?: number;
  message?: string;
  /** answer with this HTTP status and a plain body instead of a JSON-RPC error object */
  httpStatus?: number;
}

export interface RpcHangFault {
  method?: string;
  count?: number;
  /** answer normally after this many ms; default: never (the request is held until close) */
  ms?: number;
}

export type RpcFault =
  | { kind: 'error'; method?: string; remaining: number; code: number; message: string; httpStatus?: number }
  | { kind: 'hang'; method?: string; remaining: number; ms?: number };

export interface FaultStats {
  rpcErrors: number;
  rpcHangs: number;
  exhausted: number;
  dropped: number;
  stuck: number;
}

export class Faults {
  private rpc: RpcFault[] = [];
  private exhaust = 0;
  private drop = 0;
  private stick = 0;
  readonly stats: FaultStats = { rpcErrors: 0, rpcHangs: 0, exhausted: 0, dropped: 0, stuck: 0 };

  /** The next `count` RPC calls (of `method`) answer a JSON-RPC error (or an HTTP error status). */
  rpcError(spec: RpcErrorFault = {}): void {
    this.rpc.push({
      kind: 'error',
      method: spec.method,
      remaining: spec.count ?? 1,
      code: spec.code ?? -32005,
      message: spec.message ?? 'Node is unhealthy (injected fault)',
      httpStatus: spec.httpStatus,
    });
  }

  /** The next `count` RPC calls (of `method`) get no answer (or a late one after `ms`). */
  rpcHang(spec: RpcHangFault = {}): void {
    this.rpc.push({ kind: 'hang', method: spec.method, remaining: spec.count ?? 1, ms: spec.ms });
  }

  /** The next `count` transactions run out of compute units (one unit short at their first metered instruction). */
  exhaustCompute(count = 1): void {
    this.exhaust += count;
  }

  /** The next `count` transactions are accepted with a signature and never land; sending the same bytes again lands them. */
  dropNext(count = 1): void {
    this.drop += count;
  }

  /** The next `count` transactions are accepted and stay pending until their blockhash expires; they never land. */
  stickNext(count = 1): void {
    this.stick += count;
  }

  reset(): void {
    this.rpc = [];
    this.exhaust = 0;
    this.drop = 0;
    this.stick = 0;
  }

  takeRpc(method: string): RpcFault | undefined {
    const f = this.rpc.find((r) => r.remaining > 0 && (!r.method || r.method === method));
    if (!f) return undefined;
    f.remaining -= 1;
    this.rpc = this.rpc.filter((r) => r.remaining > 0);
    if (f.kind === 'error') this.stats.rpcErrors += 1;
    else this.stats.rpcHangs += 1;
    return f;
  }

  takeExhaust(): boolean {
    if (this.exhaust <= 0) return false;
    this.exhaust -= 1;
    this.stats.exhausted += 1;
    return true;
  }

  takeDrop(): boolean {
    if (this.drop <= 0) return false;
    this.drop -= 1;
    this.stats.dropped += 1;
    return true;
  }

  takeStuck(): boolean {
    if (this.stick <= 0) return false;
    this.stick -= 1;
    this.stats.stuck += 1;
    return true;
  }
}
