// A zod error as one line: `path: message; path: message`.
import type { ZodError } from 'zod';

export function zodMessage(e: ZodError): string {
  return e.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ');
}
