// Plots for the benchmarks: Vega-Lite specs rendered headless to SVG under bench/out/ (ignored by
// git), so a run leaves a picture beside its table. Two shapes cover what the benches measure:
// latency by percentile (HdrHistogram style: the tail spread out, 90% / 99% / 99.9% evenly apart)
// and bars of a cost split into its parts against a budget line.
import { mkdirSync, writeFileSync } from 'node:fs';
import { parse, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

const OUT = new URL('./out/', import.meta.url).pathname;

/** Renders a Vega-Lite spec to bench/out/<name>.svg and returns the file's path. */
export async function writePlot(name: string, spec: TopLevelSpec): Promise<string> {
  const view = new View(parse(compile(spec).spec), { renderer: 'none' });
  try {
    const svg = await view.toSVG();
    mkdirSync(OUT, { recursive: true });
    const file = `${OUT}${name}.svg`;
    writeFileSync(file, svg);
    return file;
  } finally {
    view.finalize();
  }
}

/** Percentiles from 0 to 99.99 (as many as the samples support), each as "nines" for the x axis. */
export function percentileRows(series: string, latenciesMs: number[]): { series: string; nines: number; percentile: number; ms: number }[] {
  const sorted = Float64Array.from(latenciesMs).sort();
  if (!sorted.length) return [];
  const rows = [];
  // Evenly spaced in nines: 0, 0.05, … up to where the samples still resolve the tail.
  const maxNines = Math.min(4, Math.log10(sorted.length));
  for (let nines = 0; nines <= maxNines + 1e-9; nines += 0.05) {
    const p = 1 - 10 ** -nines;
    const ms = sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
    rows.push({ series, nines, percentile: p * 100, ms });
  }
  rows.push({ series, nines: maxNines, percentile: 100, ms: sorted[sorted.length - 1] });
  return rows;
}

/** Latency by percentile, one line per series, y on a log scale. */
export function latencyPlot(name: string, title: string, series: { label: string; latenciesMs: number[] }[]): Promise<string> {
  return writePlot(name, {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    width: 560,
    height: 320,
    data: { values: series.flatMap((s) => percentileRows(s.label, s.latenciesMs)) },
    mark: { type: 'line', interpolate: 'step-after', point: false },
    encoding: {
      x: {
        field: 'nines',
        type: 'quantitative',
        title: 'percentile',
        axis: { values: [0, 1, 2, 3, 4], labelExpr: "['0%', '90%', '99%', '99.9%', '99.99%'][datum.value]" },
      },
      y: { field: 'ms', type: 'quantitative', title: 'latency (ms)', scale: { type: 'log' } },
      color: { field: 'series', type: 'nominal', title: null, legend: { orient: 'bottom', labelLimit: 480 } },
      tooltip: [
        { field: 'percentile', format: '.2f' },
        { field: 'ms', format: '.1f' },
      ],
    },
  });
}

/**
 * Horizontal stacked bars: each bar a case (`bar`), split into parts (`part`) of `value`, with an
 * optional budget drawn as a rule across all bars (e.g. the µs per event a goal allows).
 */
export function stackedBars(
  name: string,
  title: string,
  rows: { bar: string; part: string; value: number }[],
  o: { unit: string; budget?: { value: number; label: string } },
): Promise<string> {
  const bars = {
    mark: 'bar' as const,
    encoding: {
      y: { field: 'bar', type: 'nominal' as const, title: null, sort: null, axis: { labelLimit: 400 } },
      x: { field: 'value', type: 'quantitative' as const, title: o.unit, stack: 'zero' as const },
      color: { field: 'part', type: 'nominal' as const, title: null },
    },
  };
  const layers: any[] = [{ data: { values: rows }, ...bars }];
  if (o.budget) {
    layers.push({
      data: { values: [o.budget] },
      mark: { type: 'rule', strokeDash: [6, 4], color: 'black' },
      encoding: { x: { field: 'value', type: 'quantitative' } },
    });
    layers.push({
      data: { values: [o.budget] },
      mark: { type: 'text', align: 'left', dx: 4, dy: -6, baseline: 'bottom' },
      encoding: { x: { field: 'value', type: 'quantitative' }, y: { value: 0 }, text: { field: 'label' } },
    });
  }
  return writePlot(name, {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    width: 560,
    height: { step: 28 } as any,
    layer: layers,
  });
}
