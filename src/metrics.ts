// Prometheus metrics of one node (its own registry, so several nodes can share a process in tests).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Settlement outcomes, for the settlement executor: `settlementOutcomes.inc({ outcome })` with
 * outcome one of `mined`, `confirmed`, `retried`, `failed` (or `countSettlement(outcome)`). One
 * counter per process, registered in every node's registry (so /metrics of each node shows it).
 */
export const settlementOutcomes = new Counter({
  name: 'settlement_outcomes_total',
  help: 'Trade settlements by outcome (mined, confirmed, retried, failed)',
  labelNames: ['outcome'],
  registers: [],
});
export function countSettlement(outcome: 'mined' | 'confirmed' | 'retried' | 'failed' | (string & {}), n = 1): void {
  settlementOutcomes.inc({ outcome }, n);
}

/** The phases of a webhook delivery the metrics time (`webhook_phase_seconds`). */
export type IngestPhase = 'decode' | 'claim' | 'apply' | 'sync';

/** What a node lends its metrics at scrape time (consumer lag, live actors, owned partitions). */
export interface MetricsSource {
  positions(): { topic: string; partition: number; next: bigint | null }[];
  actorCounts(): Record<string, number>;
  /** Actors changed in memory since their stored snapshot (rebuilt by replay if the node dies). */
  unsavedActors?(): number;
  offsets?(topic: string): Promise<{ partition: number; low: bigint; high: bigint }[]>;
  /** Reply records to other nodes' askers: written straight to them, or through their reply topics (src/runtime/direct-replies.ts). */
  replies?(): { direct: number; topic: number };
}

/** What the WebSocket channels lend the metrics at scrape time (src/ws/server.ts, src/clob/market-feed.ts). */
export interface WsMetricsSource {
  /** Open connections by channel (`market`, `user`). */
  connections(): Record<string, number>;
  /** Messages sent since start, by channel. */
  sent(): Record<string, number>;
  /** Connections dropped since start, by close code. */
  dropped(): Map<number, number>;
  /** Resumes since start: `exact` (the missed messages) or `snapshot` (a fresh book instead). */
  resumes(): { exact: number; snapshot: number };
}

export function createMetrics(nodeId: string, defaults = true) {
  const registry = new Registry();
  registry.setDefaultLabels({ node: nodeId });
  if (defaults) collectDefaultMetrics({ register: registry });
  const http = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP latency',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
  });
  const batches = new Histogram({
    name: 'runtime_batch_duration_seconds',
    help: 'Partition batch processing time',
    labelNames: ['topic'],
    registers: [registry],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
  });
  const records = new Counter({ name: 'runtime_records_total', help: 'Commands processed', labelNames: ['topic'], registers: [registry] });
  const resyncs = new Counter({
    name: 'runtime_partition_resyncs_total',
    help: 'Partitions (re)loaded from the store',
    labelNames: ['topic'],
    registers: [registry],
  });
  const retries = new Counter({
    name: 'runtime_batch_retries_total',
    help: 'Batches that failed (commit or store read) and are retried from the store after a backoff pause',
    labelNames: ['topic'],
    registers: [registry],
  });
  const poison = new Counter({
    name: 'runtime_poison_records_total',
    help: 'Records the runtime dead-lettered and went past: unparsable (parse), their decider threw (decide), their commit failed on their data (commit)',
    labelNames: ['topic', 'cause'],
    registers: [registry],
  });
  const deadLetters = new Counter({
    name: 'dead_letters_total',
    help: 'Inputs kept as dead letters',
    labelNames: ['reason'],
    registers: [registry],
  });
  const deferrals = new Counter({
    name: 'webhook_deferrals_total',
    help: 'Webhook deliveries answered 503 deferred',
    registers: [registry],
  });
  const truncated = new Counter({
    name: 'webhook_truncated_logs_total',
    help: 'Transactions whose logs were truncated',
    registers: [registry],
  });
  const ingestPhases = new Histogram({
    name: 'webhook_phase_seconds',
    help: "A webhook delivery's time by phase: decode (validate and decode its transactions), claim (its event identities), apply (its events committed by their owners), sync (this node's read cache caught up)",
    labelNames: ['phase'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  let source: MetricsSource | null = null;
  const partitions = new Gauge({
    name: 'runtime_partitions_owned',
    help: 'Partitions this node owns',
    registers: [registry],
    collect() {
      if (source) this.set(source.positions().length);
    },
  });
  registry.registerMetric(settlementOutcomes);
  const asks = new Histogram({
    name: 'asks_duration_seconds',
    help: 'Asks (command + answer) by topic and outcome (ok, timeout, failed)',
    labelNames: ['topic', 'outcome'],
    registers: [registry],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
  });
  new Gauge({
    name: 'consumer_lag',
    help: 'Records not yet processed, per owned partition (log end - next offset)',
    labelNames: ['topic', 'partition'],
    registers: [registry],
    async collect() {
      this.reset();
      if (!source?.offsets) return;
      const owned = source.positions();
      for (const topic of new Set(owned.map((o) => o.topic))) {
        let ends: { partition: number; low: bigint; high: bigint }[];
        try {
          ends = await source.offsets(topic);
        } catch {
          continue;
        }
        for (const o of owned.filter((x) => x.topic === topic)) {
          const end = ends.find((e) => e.partition === o.partition);
          if (!end) continue;
          const next = o.next ?? end.low;
          this.set({ topic, partition: String(o.partition) }, Number(end.high > next ? end.high - next : 0n));
        }
      }
    },
  });
  new Gauge({
    name: 'runtime_actors',
    help: 'Actors live in this node, per kind',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      this.reset();
      if (source) for (const [kind, n] of Object.entries(source.actorCounts())) this.set({ kind }, n);
    },
  });
  new Counter({
    name: 'runtime_direct_replies_total',
    help: 'Reply records to askers on other nodes that named a reply server: written to it (path="direct") or through their reply topic while that connection was not up (path="topic")',
    labelNames: ['path'],
    registers: [registry],
    collect() {
      const r = source?.replies?.();
      this.reset();
      if (r) for (const path of ['direct', 'topic'] as const) this.inc({ path }, r[path]);
    },
  });
  new Gauge({
    name: 'runtime_unsaved_actors',
    help: 'Actors changed in memory since their stored snapshot (a new owner replays their records)',
    registers: [registry],
    collect() {
      if (source?.unsavedActors) this.set(source.unsavedActors());
    },
  });
  const snapshotAt = new Map<string, number>();
  new Gauge({
    name: 'snapshot_age_seconds',
    help: 'Seconds since this node last committed snapshots of an owned partition',
    labelNames: ['topic', 'partition'],
    registers: [registry],
    collect() {
      this.reset();
      const now = Date.now();
      const owned = source ? new Set(source.positions().map((p) => `${p.topic}\u0000${p.partition}`)) : null;
      for (const [k, at] of snapshotAt) {
        if (owned && !owned.has(k)) continue;
        const [topic, partition] = k.split('\u0000');
        this.set({ topic, partition }, (now - at) / 1000);
      }
    },
  });
  const readCache = new Counter({
    name: 'parlay_read_cache_total',
    help: 'Parlay reads answered from memory (hit) or the database (miss)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const ledgerReads = new Counter({
    name: 'clob_order_ledger_reads_total',
    help: 'Orders looked up in the ledger (posted before?): before their ask, or asked by their book (book_forgets: it no longer remembers every order; book_filter: its filter of orders let go says maybe)',
    labelNames: ['why'],
    registers: [registry],
  });
  const heartbeatExpiries = new Counter({
    name: 'clob_heartbeat_expiries_total',
    help: 'Wallets whose heartbeats stopped (cancel-on-disconnect runs)',
    registers: [registry],
  });
  const heartbeatCancels = new Counter({
    name: 'clob_heartbeat_cancelled_orders_total',
    help: 'Orders cancelled because their wallet stopped its heartbeats',
    registers: [registry],
  });
  let wsSource: WsMetricsSource | null = null;
  new Gauge({
    name: 'ws_connections',
    help: 'Open WebSocket connections, by channel (market, user)',
    labelNames: ['channel'],
    registers: [registry],
    collect() {
      this.reset();
      if (wsSource) for (const [channel, n] of Object.entries(wsSource.connections())) this.set({ channel }, n);
    },
  });
  // Counted by the channels as plain numbers (a message to 1,000 subscribers is 1,000 sends): read at scrape time.
  new Counter({
    name: 'ws_messages_sent_total',
    help: 'WebSocket messages sent, by channel',
    labelNames: ['channel'],
    registers: [registry],
    collect() {
      this.reset();
      if (wsSource) for (const [channel, n] of Object.entries(wsSource.sent())) this.inc({ channel }, n);
    },
  });
  new Counter({
    name: 'ws_dropped_total',
    help: 'WebSocket connections the node closed, by close code (4008 slow consumer, 4408 silent, 4029 flood, 4400 malformed, 4401 unauthorized, 4413 too many subscriptions, 1003 binary)',
    labelNames: ['code'],
    registers: [registry],
    collect() {
      this.reset();
      if (wsSource) for (const [code, n] of wsSource.dropped()) this.inc({ code: String(code) }, n);
    },
  });
  new Counter({
    name: 'ws_resumes_total',
    help: 'market channel subscriptions with last_seq, by outcome: exact (the missed messages) or snapshot (a fresh book)',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      this.reset();
      if (wsSource) for (const [outcome, n] of Object.entries(wsSource.resumes())) this.inc({ outcome }, n);
    },
  });
  return {
    registry,
    partitions,
    /** Lends the WebSocket channels' counts to the scrape. */
    attachWs: (s: WsMetricsSource) => {
      wsSource = s;
    },
    observeHttp: (route: string, method: string, status: number, s: number) => http.observe({ route, method, status: String(status) }, s),
    observeAsk: (topic: string, outcome: string, s: number) => asks.observe({ topic, outcome }, s),
    /** Lends the node's runtime and bus to the scrape-time gauges. */
    attach: (s: MetricsSource) => {
      source = s;
    },
    heartbeatExpiry: (cancelled: number) => {
      heartbeatExpiries.inc();
      heartbeatCancels.inc(cancelled);
    },
    settlement: countSettlement,
    ledgerRead: (why: string) => ledgerReads.inc({ why }),
    readCache: { hit: () => readCache.inc({ outcome: 'hit' }), miss: () => readCache.inc({ outcome: 'miss' }) },
    runtime: {
      batch: (topic: string, n: number, ms: number) => {
        batches.observe({ topic }, ms / 1000);
        records.inc({ topic }, n);
      },
      resync: (topic: string) => resyncs.inc({ topic }),
      snapshots: (topic: string, partition: number) => {
        snapshotAt.set(`${topic}\u0000${partition}`, Date.now());
      },
      deadLetters: (_topic: string, n: number) => deadLetters.inc({ reason: 'runtime' }, n),
      retry: (topic: string) => retries.inc({ topic }),
      poison: (topic: string, _partition: number, cause: string) => poison.inc({ topic, cause }),
    },
    ingest: {
      deadLetter: (reason: string) => deadLetters.inc({ reason }),
      deferred: () => deferrals.inc(),
      truncated: () => truncated.inc(),
      phase: (phase: IngestPhase, seconds: number) => ingestPhases.observe({ phase }, seconds),
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
