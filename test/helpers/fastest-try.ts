// Timing bounds on a loaded CI machine: a measurement over its bound is taken again, up to `tries`
// times, and the best try counts. What the bound is there to catch (a freeze, quadratic work)
// repeats on every try; a hiccup of the machine (GC, another process on the core) does not.

/**
 * Runs `measure` until `over` says a try is within its bounds (< 1), at most `tries` times, and
 * returns the try with the lowest `over`.
 */
export async function fastestTry<T>(measure: () => Promise<T>, over: (x: T) => number, tries = 3): Promise<T> {
  let best = await measure();
  for (let n = 1; n < tries && over(best) >= 1; n++) {
    const again = await measure();
    if (over(again) < over(best)) best = again;
  }
  return best;
}
