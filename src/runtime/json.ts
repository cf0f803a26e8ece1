// JSON helpers that never throw on bigint.

/** What a value becomes through toJson and JSON.parse: a bigint arrives as its decimal string. */
export type Json<T> = T extends bigint ? string : T extends object ? { [K in keyof T]: Json<T[K]> } : T;

export function toJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
  }
}
