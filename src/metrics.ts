// Prometheus metrics of one node (its own registry, so several nodes can share a process in tests).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export function createMetrics(nodeId: string, defaults = true) {
  const registry = new Registry();
  registry.setDefaultLabels({ node: nodeId });
  if (defaults) collectDefaultMetrics({ register: registry });
  const http = new Histogram({ name: 'http_request_duration_seconds', help: 'HTTP latency', labelNames: ['route', 'method', 'status'], registers: [registry], buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5] });
  const batches = new Histogram({ name: 'runtime_batch_duration_seconds', help: 'Partition batch processing time', labelNames: ['topic'], registers: [registry], buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5] });
  const records = new Counter({ name: 'runtime_records_total', help: 'Commands processed', labelNames: ['topic'], registers: [registry] });
  const resyncs = new Counter({ name: 'runtime_partition_resyncs_total', help: 'Partitions (re)loaded from the store', labelNames: ['topic'], registers: [registry] });
  const deadLetters = new Counter({ name: 'dead_letters_total', help: 'Inputs kept as dead letters', labelNames: ['reason'], registers: [registry] });
  const deferrals = new Counter({ name: 'webhook_deferrals_total', help: 'Webhook deliveries answered 503 deferred', registers: [registry] });
  const truncated = new Counter({ name: 'webhook_truncated_logs_total', help: 'Transactions whose logs were truncated', registers: [registry] });
  const partitions = new Gauge({ name: 'runtime_partitions_owned', help: 'Partitions this node owns', registers: [registry] });
  return {
    registry,
    partitions,
    observeHttp: (route: string, method: string, status: number, s: number) => http.observe({ route, method, status: String(status) }, s),
    runtime: {
      batch: (topic: string, n: number, ms: number) => { batches.observe({ topic }, ms / 1000); records.inc({ topic }, n); },
      resync: (topic: string) => resyncs.inc({ topic }),
    },
    ingest: {
      deadLetter: (reason: string) => deadLetters.inc({ reason }),
      deferred: () => deferrals.inc(),
      truncated: () => truncated.inc(),
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
