// Finds the program's event lines in a transaction's logs: `Program data:` lines written while the
// given program is the one executing (invoke/success/failed lines tracked as a stack), so that data
// lines of other programs, such as a token-program CPI, are ignored.
export interface EventLine { index: number; data: string }
export interface ProgramLogs { events: EventLine[]; truncated: boolean }

const INVOKE = /^Program (\S+) invoke \[(\d+)\]$/;
const EXIT = /^Program (\S+) (success|failed)/;
const DATA = 'Program data: ';

export function programEventLines(logs: readonly string[], programId: string): ProgramLogs {
  const stack: string[] = [];
  const events: EventLine[] = [];
  let truncated = false;
  for (const line of logs) {
    if (line === 'Log truncated' || line.startsWith('Log truncated')) { truncated = true; continue; }
    const inv = INVOKE.exec(line);
    if (inv) { stack.push(inv[1]); continue; }
    const exit = EXIT.exec(line);
    if (exit) {
      // Pop back to the program that exits (robust to a missing line in between).
      const at = stack.lastIndexOf(exit[1]);
      if (at >= 0) stack.length = at;
      continue;
    }
    if (line.startsWith(DATA) && stack[stack.length - 1] === programId) {
      events.push({ index: events.length, data: line.slice(DATA.length).trim() });
    }
  }
  return { events, truncated };
}
