// In-process bus: the same topics, partitions, partitioner and per-key ordering as Kafka, in memory.
// One member per consumer group; offsets are positions in a partition's log, which starts empty at
// every boot (the bus is not durable: the runtime learns that from `durable`).
import { partitionFor } from './partitioner.ts';
import { lazyRecord } from './envelope.ts';
import type { Bus, ConsumeOptions, ConsumerHandle, InRecord, OutRecord, TopicSpec } from './types.ts';

interface PartitionLog {
  base: bigint; // offset of records[0]
  records: InRecord[];
  waiters: Set<() => void>;
}

const MAX_BATCH = 500;
const TRIM_STEP = 512;

export class MemoryBus implements Bus {
  readonly durable = false;
  private topics = new Map<string, PartitionLog[]>();
  private positions = new Map<string, Map<string, bigint>>(); // topic:partition -> group -> next offset
  private closed = false;
  /** Partitions pausing before a retry (BatchOutcome.retryInMs): woken early by a stop or close. */
  private sleepers = new Set<() => void>();

  constructor(
    private defaultPartitions = 12,
    private onError?: (err: unknown, topic: string, partition: number) => void,
  ) {}

  async ensureTopics(specs: TopicSpec[]): Promise<void> {
    for (const s of specs) this.log(s.topic, s.partitions);
  }

  partitionsOf(topic: string): number {
    return this.log(topic).length;
  }

  async offsets(topic: string): Promise<{ partition: number; low: bigint; high: bigint }[]> {
    return this.log(topic).map((l, partition) => ({ partition, low: l.base, high: l.base + BigInt(l.records.length) }));
  }

  async ping(): Promise<void> {
    if (this.closed) throw new Error('bus closed');
  }

  private log(topic: string, partitions = this.defaultPartitions): PartitionLog[] {
    let logs = this.topics.get(topic);
    if (!logs) {
      logs = Array.from({ length: partitions }, () => ({ base: 0n, records: [], waiters: new Set<() => void>() }));
      this.topics.set(topic, logs);
    }
    return logs;
  }

  async send(topic: string, records: OutRecord[]): Promise<void> {
    if (this.closed) throw new Error('bus closed');
    const logs = this.log(topic);
    const touched = new Set<PartitionLog>();
    for (const r of records) {
      const partition = partitionFor(r.key, logs.length);
      const log = logs[partition];
      const offset = log.base + BigInt(log.records.length);
      // A record with `decoded` may carry its text as a getter (OutRecord.decoded): copied without
      // reading it. Every other record is copied as it is.
      log.records.push(
        r.decoded === undefined
          ? { ...r, topic, partition, offset }
          : lazyRecord({ key: r.key, headers: r.headers, decoded: r.decoded, topic, partition, offset }, () => r.value),
      );
      touched.add(log);
    }
    for (const log of touched) for (const w of [...log.waiters]) w();
  }

  async consume(opts: ConsumeOptions): Promise<ConsumerHandle> {
    let running = true;
    const loops: Promise<void>[] = [];
    const assigned: { topic: string; partition: number }[] = [];
    for (const topic of opts.topics) {
      const logs = this.log(topic);
      logs.forEach((log, partition) => {
        assigned.push({ topic, partition });
        loops.push(this.loop(opts, topic, partition, log, () => running));
      });
    }
    opts.onAssignment?.(assigned);
    return {
      stop: async () => {
        running = false;
        for (const logs of this.topics.values()) for (const l of logs) for (const w of [...l.waiters]) w();
        for (const w of [...this.sleepers]) w();
        await Promise.allSettled(loops);
      },
    };
  }

  private async loop(opts: ConsumeOptions, topic: string, partition: number, log: PartitionLog, running: () => boolean) {
    const id = `${topic}:${partition}`;
    const groups = this.positions.get(id) ?? new Map<string, bigint>();
    this.positions.set(id, groups);
    let next = groups.get(opts.groupId) ?? (opts.fromBeginning ? log.base : log.base + BigInt(log.records.length));
    // Known before its first batch ends, so that no other group's trim drops what it has yet to read.
    groups.set(opts.groupId, next);
    while (running() && !this.closed) {
      const end = log.base + BigInt(log.records.length);
      if (next >= end) {
        await new Promise<void>((resolve) => {
          const w = () => {
            log.waiters.delete(w);
            resolve();
          };
          log.waiters.add(w);
        });
        continue;
      }
      const from = Number(next - log.base);
      const records = log.records.slice(Math.max(0, from), from + MAX_BATCH);
      try {
        const outcome = await opts.onBatch({ topic, partition, records });
        next = 'seek' in outcome ? outcome.seek : records[records.length - 1].offset + 1n;
        if ('seek' in outcome && outcome.retryInMs) {
          groups.set(opts.groupId, next);
          await this.pause(outcome.retryInMs);
        }
      } catch (err) {
        this.onError?.(err, topic, partition);
        await new Promise((r) => setTimeout(r, 50)); // the handler failed: deliver the same batch again
      }
      groups.set(opts.groupId, next);
      this.trim(log, groups);
    }
  }

  /**
   * Drops records every group has consumed, as soon as they are at least half of what the log holds
   * (or TRIM_STEP): the splice is amortised, and a consumed record held on (a bulk record is tens of
   * kilobytes) only adds to what the garbage collector marks on every major cycle.
   */
  private trim(log: PartitionLog, groups: Map<string, bigint>) {
    let min = log.base + BigInt(log.records.length);
    for (const p of groups.values()) if (p < min) min = p;
    const drop = Number(min - log.base);
    // At least as many dropped as kept (or TRIM_STEP): the splice's cost is paid by what it drops.
    if (drop > 0 && (drop >= TRIM_STEP || 2 * drop >= log.records.length)) {
      log.records.splice(0, drop);
      log.base = min;
    }
  }

  /** Waits `ms` (a retry's backoff), or less when the bus closes or a consumer stops. */
  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.sleepers.add(done);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const logs of this.topics.values()) for (const l of logs) for (const w of [...l.waiters]) w();
    for (const w of [...this.sleepers]) w();
  }
}
