// The client's HTTP transport: JSON in and out, a list of node URLs tried in turn when a node is
// away (connection refused or reset, timeout, 503), typed errors, and a hook seeing every answer.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: unknown,
  ) {
    super(`${status} ${code}: ${message}`);
  }
}

/** A node could not be reached on any URL within the retries. */
export class UnavailableError extends Error {}

export interface ResponseInfo {
  method: string;
  /** The route as documented: `/v1/orders/:id`. */
  route: string;
  url: string;
  status: number;
  body: unknown;
}

export interface TransportOptions {
  /** One node URL or several (a cluster): requests move to the next one when a node is away. */
  urls: string | string[];
  /** Attempts of one request across the nodes (connection errors and 503); default 8. */
  attempts?: number;
  /** First pause between attempts, doubled each time up to 2 s; default 100 ms. */
  retryDelayMs?: number;
  /** Per attempt; default 20 s. */
  timeoutMs?: number;
  /** Sees every answer (tests check them against the OpenAPI document). */
  onResponse?: (r: ResponseInfo) => void;
  fetch?: typeof fetch;
}

export interface RequestOptions {
  params?: Record<string, string | number>;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Retry on 503 and connection errors (default true). */
  retry?: boolean;
}

export interface Answer<T = any> {
  status: number;
  body: T;
  headers: Headers;
  attempts: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Transport {
  readonly urls: string[];
  /** How many times requests moved to another node (a node away or answering 503). */
  failovers = 0;
  private at = 0;
  private fetch: typeof fetch;

  constructor(private o: TransportOptions) {
    this.urls = (Array.isArray(o.urls) ? o.urls : [o.urls]).map((u) => u.replace(/\/+$/, ''));
    if (!this.urls.length) throw new Error('give at least one node URL');
    this.fetch = o.fetch ?? fetch;
  }

  /** The node URL requests go to now. */
  get url(): string {
    return this.urls[this.at % this.urls.length];
  }

  /** Moves to the next node URL. */
  next(): void {
    this.failovers++;
    this.at = (this.at + 1) % this.urls.length;
  }

  path(route: string, params: Record<string, string | number> = {}, query: Record<string, string | number | undefined> = {}): string {
    const p = route.replace(/:([A-Za-z0-9_]+)/g, (_, k) => {
      if (params[k] === undefined) throw new Error(`missing path parameter ${k}`);
      return encodeURIComponent(String(params[k]));
    });
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) qs.set(k, String(v));
    const s = qs.toString();
    return s ? `${p}?${s}` : p;
  }

  /** One request; answers whatever status the service gives, except that it retries a node that is away. */
  async request<T = any>(method: string, route: string, r: RequestOptions = {}): Promise<Answer<T>> {
    const attempts = r.retry === false ? 1 : (this.o.attempts ?? 8);
    let delay = this.o.retryDelayMs ?? 100;
    let last: unknown;
    for (let i = 1; i <= attempts; i++) {
      const url = this.url + this.path(route, r.params, r.query);
      const headers: Record<string, string> = { accept: 'application/json', ...r.headers };
      let body: string | undefined;
      if (r.body !== undefined) {
        body = JSON.stringify(r.body);
        headers['content-type'] = 'application/json';
      }
      try {
        const res = await this.fetch(url, { method, headers, body, signal: AbortSignal.timeout(this.o.timeoutMs ?? 20_000) });
        const text = await res.text();
        let parsed: any = text;
        if ((res.headers.get('content-type') ?? '').includes('json')) {
          try {
            parsed = JSON.parse(text);
          } catch {
            /* leave the text */
          }
        }
        this.o.onResponse?.({ method: method.toLowerCase(), route, url, status: res.status, body: parsed });
        if (res.status === 503 && i < attempts && r.retry !== false) {
          last = new ApiError(503, parsed?.error ?? 'unavailable', parsed?.message ?? 'unavailable', parsed);
        } else {
          return { status: res.status, body: parsed, headers: res.headers, attempts: i };
        }
      } catch (e) {
        last = e; // refused, reset, timed out: this node is away for now
      }
      if (i < attempts) {
        this.next();
        await sleep(delay);
        delay = Math.min(2000, delay * 2);
      }
    }
    if (last instanceof ApiError) throw last;
    throw new UnavailableError(`${method} ${route}: no node answered after ${attempts} attempts (${(last as Error)?.message ?? last})`);
  }
}

/** Throws ApiError unless the status is one of `ok`; answers the body. */
export function expect<T>(a: Answer<T>, ok: number[] = [200]): T {
  if (ok.includes(a.status)) return a.body;
  const b: any = a.body;
  throw new ApiError(a.status, b?.error ?? b?.code ?? 'error', b?.message ?? b?.errorMsg ?? String(b), b);
}
