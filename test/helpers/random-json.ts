// Random JSON values for property tests of the body checks: a seeded generator (the same values on
// every run) of strings made of the given pieces, numbers, arrays and objects, nested to about `deep`.
export function randomJson(o: { seed: number; pieces: string[]; pieceRuns: number; deep: number }) {
  let seed = o.seed;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const str = () => Array.from({ length: rnd(o.pieceRuns) }, () => o.pieces[rnd(o.pieces.length)]).join('');
  const value = (d: number): unknown => {
    const k = rnd(d > o.deep ? 2 : 5);
    if (k === 0) return str();
    if (k === 1) return rnd(1000);
    if (k === 2) return Array.from({ length: rnd(4) }, () => value(d + 1));
    return Object.fromEntries(Array.from({ length: rnd(4) }, () => [str(), value(d + 1)]));
  };
  return value;
}
