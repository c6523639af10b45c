// charts: live time series of the console (uPlot), one chart per question an
// operator asks: is it busy, is it behind, are the rings filling, which
// routes are slow. Each chart has a text caption with the latest values for
// screen readers. Browser main thread.

import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { MetricsHistory, Point } from './metrics.js';

const COLORS = ['#58a6ff', '#3fb950', '#d29922', '#f85149', '#bc8cff', '#39c5cf'];

export interface Line {
  label: string;
  value: (p: Point) => number | null;
}

function chartOptions(lines: Line[], width: number, range?: [number, number]): uPlot.Options {
  return {
    width,
    height: 180,
    scales: { x: { time: true }, ...(range ? { y: { range } } : {}) },
    axes: [
      { stroke: '#8b949e', grid: { stroke: '#21262d' }, ticks: { stroke: '#30363d' } },
      { stroke: '#8b949e', grid: { stroke: '#21262d' }, ticks: { stroke: '#30363d' }, size: 60 },
    ],
    legend: { live: false },
    series: [
      { label: 'time' },
      ...lines.map((l, i) => ({ label: l.label, stroke: COLORS[i % COLORS.length]!, width: 1.5, spanGaps: true })),
    ],
    cursor: { show: true },
  };
}

function dataOf(history: MetricsHistory, lines: Line[]): uPlot.AlignedData {
  const pts = history.points;
  return [pts.map((p) => p.t), ...lines.map((l) => pts.map((p) => l.value(p)))] as uPlot.AlignedData;
}

/** One live chart; redrawn when `version` changes. `lines` may change with the data (routes appear). */
export function TimeChart(props: {
  title: string;
  unit: string;
  history: MetricsHistory;
  lines: Line[];
  version: number;
  testid: string;
  range?: [number, number];
}) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<{ u: uPlot; labels: string } | null>(null);
  const labels = props.lines.map((l) => l.label).join('|');

  useEffect(() => {
    const el = box.current!;
    const u = new uPlot(chartOptions(props.lines, el.clientWidth || 400, props.range), dataOf(props.history, props.lines), el);
    plot.current = { u, labels };
    const ro = new ResizeObserver(() => u.setSize({ width: el.clientWidth, height: 180 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [labels]);

  useEffect(() => {
    plot.current?.u.setData(dataOf(props.history, props.lines));
  }, [props.version]);

  const last = props.history.points[props.history.points.length - 1];
  const summary =
    last === undefined
      ? 'no data yet'
      : props.lines
          .map((l) => {
            const v = l.value(last);
            return `${l.label} ${v === null ? '–' : v.toLocaleString(undefined, { maximumFractionDigits: 2 })}`;
          })
          .join(', ');
  return (
    <figure data-testid={props.testid}>
      <figcaption>
        {props.title}{' '}
        <span class="muted">
          ({props.unit}) now: {summary}
        </span>
      </figcaption>
      <div ref={box} role="img" aria-label={`${props.title} over the last minutes, ${props.unit}; now ${summary}`} />
    </figure>
  );
}
