// kafkajs 2.2.4's request queue, without its idle timer loop. Its `scheduleCheckPendingRequests`
// arms a timer of `throttledUntil - Date.now()` ms whenever none is armed, also when nothing is
// waiting to be sent and the connection was never throttled (`throttledUntil` -1): Node runs that
// at once (1 ms, with a TimeoutNegativeWarning), the check re-arms it, and every broker connection
// of every client spins a thousand times a second for as long as it lives (kafkajs issues 1556,
// 1704 and 1751; unfixed upstream). An idle 3-node cluster's nodes burned 14–18% of a core, 8–10%
// without it.
//
// Here the queue arms its timer only while a request waits: at the end of the broker's throttle,
// or after 10 ms if that end has passed (kafkajs's interval), as 2.2.4 does then. With nothing
// waiting there is nothing to check: a request is sent when pushed if it can be, queued (and the
// timer armed) if not, and every answer checks the queue again.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** kafkajs's own interval between checks of a throttled queue. */
const CHECK_PENDING_REQUESTS_INTERVAL = 10;

interface RequestQueue {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

function scheduleCheckPendingRequests(this: RequestQueue): void {
  if (this.throttleCheckTimeoutId || this.pending.length === 0) return;
  const untilUnthrottled = this.throttledUntil - Date.now();
  this.throttleCheckTimeoutId = setTimeout(
    () => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    },
    untilUnthrottled > 0 ? untilUnthrottled : CHECK_PENDING_REQUESTS_INTERVAL,
  );
}

let fixed = false;

/**
 * Replaces the method on kafkajs's RequestQueue (every connection of every client in this process,
 * made before or after). Only on the version it was written for: false, and kafkajs unchanged, on
 * any other.
 */
export function fixKafkajsRequestQueue(): boolean {
  if (fixed) return true;
  if ((require('kafkajs/package.json') as { version: string }).version !== '2.2.4') return false;
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueue };
  RequestQueue.prototype.scheduleCheckPendingRequests = scheduleCheckPendingRequests;
  fixed = true;
  return true;
}

/** The RequestQueue class of kafkajs (for tests). */
export const kafkajsRequestQueue = () =>
  require('kafkajs/src/network/requestQueue/index.js') as new (o: Record<string, unknown>) => RequestQueue & {
    push(r: unknown): void;
    maybeThrottle(ms: number | null): void;
    destroy(): void;
  };
