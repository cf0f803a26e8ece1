// Process warnings of kafkajs that say nothing about the system (every KafkaBus applies this to its process; other users of kafkajs call it themselves).
/**
 * kafkajs 2.2.4 arms its request queue's throttle timer with `throttledUntil - Date.now()` ms while
 * `throttledUntil` is still its initial -1 (never throttled): Node clamps the delay to 1 ms and
 * prints a TimeoutNegativeWarning in every process that uses Kafka. That one is harmless and dropped;
 * every other process warning is printed as before.
 */
let quiet = false;

export function quietKafkajsTimerWarning() {
  if (quiet) return;
  quiet = true;
  const printers = process.listeners('warning');
  process.removeAllListeners('warning');
  process.on('warning', (w) => {
    if (w.name === 'TimeoutNegativeWarning') return;
    for (const print of printers) print(w);
  });
}
