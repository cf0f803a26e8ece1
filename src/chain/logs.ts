// Finds the program's event lines in a transaction's logs: `Program data:` lines written while the
// given program is the one executing (invoke/success/failed lines tracked as a stack), so that data
// lines of other programs, such as a token-program CPI, are ignored.
//
// Linear in the number of lines whatever they hold: an exit line pops back to the innermost frame
// of the program that exits (robust to a missing line in between), found through a count of each
// program's frames on the stack instead of a search of the stack; every frame is pushed and popped
// at most once.
export interface EventLine {
  index: number;
  data: string;
}
export interface ProgramLogs {
  events: EventLine[];
  truncated: boolean;
}

const INVOKE = /^Program (\S+) invoke \[(\d+)\]$/;
const EXIT = /^Program (\S+) (success|failed)/;
const DATA = 'Program data: ';

export function programEventLines(logs: readonly string[], programId: string): ProgramLogs {
  const stack: string[] = [];
  /** Frames of each program on the stack. */
  const frames = new Map<string, number>();
  const events: EventLine[] = [];
  let truncated = false;
  for (const line of logs) {
    if (line.startsWith('Log truncated')) {
      truncated = true;
      continue;
    }
    if (!line.startsWith('Program ')) continue;
    const inv = INVOKE.exec(line);
    if (inv) {
      stack.push(inv[1]);
      frames.set(inv[1], (frames.get(inv[1]) ?? 0) + 1);
      continue;
    }
    const exit = EXIT.exec(line);
    if (exit) {
      if (!frames.get(exit[1])) continue; // not on the stack: nothing to pop
      for (;;) {
        const top = stack.pop()!;
        const n = frames.get(top)! - 1;
        if (n) frames.set(top, n);
        else frames.delete(top);
        if (top === exit[1]) break;
      }
      continue;
    }
    if (line.startsWith(DATA) && stack[stack.length - 1] === programId) {
      events.push({ index: events.length, data: line.slice(DATA.length).trim() });
    }
  }
  return { events, truncated };
}
