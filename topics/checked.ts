// A topic schema whose parses are remembered: a value this process parsed is not parsed again when
// it reaches its consumer in the same process (the in-process bus hands objects over as they are).
// Only the parse's own output is remembered, by identity and weakly: a fresh object nobody else
// held when it was made. Anything else (text from Kafka, a copy, an object built by hand) is parsed.
import type { z } from 'zod';

export interface CheckedSchema<S extends z.ZodType> {
  /** Parses `v` (as `safeParse`); a success's output is remembered as parsed. */
  check(v: unknown): z.ZodSafeParseResult<z.output<S>>;
  /** `v` itself when `check` made it, else `v` parsed (throws on what the schema refuses). */
  parse(v: unknown): z.output<S>;
}

export function checkedSchema<S extends z.ZodType>(schema: S): CheckedSchema<S> {
  const made = new WeakSet<object>();
  return {
    check(v) {
      const r = schema.safeParse(v);
      if (r.success && typeof r.data === 'object' && r.data !== null) made.add(r.data);
      return r;
    },
    parse(v) {
      return typeof v === 'object' && v !== null && made.has(v) ? (v as z.output<S>) : schema.parse(v);
    },
  };
}
