// Bar charts with their scale: a vertical chart over days (a y axis with round ticks and its unit,
// an x axis with dates) and a horizontal chart over categories (each bar labelled with its value).
// Each carries a table of the same figures for screen readers.

import type { ReactNode } from 'react';

/** Round tick values from 0 to at least `max` (1, 2 or 5 times a power of ten apart), at most five steps. */
export function niceTicks(max: number): number[] {
  if (max <= 0) return [0, 1];
  const rough = max / 4;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? 10 * power;
  const top = Math.ceil(max / step) * step;
  return Array.from({ length: Math.round(top / step) + 1 }, (_, i) => Math.round(i * step * 1e6) / 1e6);
}

/** A short figure for an axis label: 1,200 as 1.2k, 3,000,000 as 3M. */
export function shortNumber(n: number): string {
  if (n >= 1e6) return `${+(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${+(n / 1e3).toFixed(1)}k`;
  return n.toLocaleString('en-US');
}

const width = 640;
const height = 220;
const left = 48;
const bottom = 28;
const top = 26;

/** Bars over days (`YYYY-MM-DD`), oldest first, with a y axis in `unit` and every few days' dates. */
export function DayChart({
  data,
  unit,
  title,
}: {
  readonly data: readonly { readonly day: string; readonly value: number }[];
  readonly unit: string;
  readonly title: string;
}): ReactNode {
  const ticks = niceTicks(Math.max(0, ...data.map((d) => d.value)));
  const max = ticks[ticks.length - 1]!;
  const plotW = width - left - 8;
  const plotH = height - top - bottom;
  const barW = plotW / Math.max(1, data.length);
  const y = (v: number) => top + plotH - (v / max) * plotH;
  const every = Math.max(1, Math.ceil(data.length / 7));
  return (
    <figure className="chart">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label={`${title}: bar chart, ${unit} per day from ${data[0]?.day ?? ''} to ${data.at(-1)?.day ?? ''}`}
      >
        <text className="axis-unit" x={4} y={4} dominantBaseline="hanging">
          {unit}
        </text>
        {ticks.map((t) => (
          <g key={t} className="tick">
            <line x1={left} x2={width - 8} y1={y(t)} y2={y(t)} />
            <text x={left - 6} y={y(t)} textAnchor="end" dominantBaseline="middle">
              {shortNumber(t)}
            </text>
          </g>
        ))}
        {data.map((d, i) => {
          const h = (d.value / max) * plotH;
          return (
            <rect key={d.day} x={left + i * barW + barW * 0.15} y={top + plotH - h} width={barW * 0.7} height={h}>
              <title>{`${d.day}: ${d.value.toLocaleString('en-US')} ${unit}`}</title>
            </rect>
          );
        })}
        <line className="axis" x1={left} x2={width - 8} y1={top + plotH} y2={top + plotH} />
        <line className="axis" x1={left} x2={left} y1={top} y2={top + plotH} />
        {data.map((d, i) =>
          i % every === 0 || i === data.length - 1 ? (
            <text key={d.day} className="x-label" x={left + i * barW + barW / 2} y={height - 8} textAnchor="middle">
              {d.day.slice(5)}
            </text>
          ) : null,
        )}
      </svg>
      <figcaption>
        {title} (UTC days, {data[0]?.day.slice(0, 4)})
      </figcaption>
      <table className="visually-hidden">
        <caption>{title}</caption>
        <thead>
          <tr>
            <th>Day</th>
            <th>{unit}</th>
          </tr>
        </thead>
        <tbody>
          {data.map((d) => (
            <tr key={d.day}>
              <td>{d.day}</td>
              <td>{d.value}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}

/** Horizontal bars, one per category, each with its label and value in `unit`. */
export function CategoryChart({
  data,
  unit,
  title,
}: {
  readonly data: readonly { readonly key: string; readonly value: number }[];
  readonly unit: string;
  readonly title: string;
}): ReactNode {
  const max = Math.max(1, ...data.map((d) => d.value));
  const total = data.reduce((a, d) => a + d.value, 0);
  return (
    <figure className="chart category-chart">
      <figcaption>
        {title}, in {unit}
      </figcaption>
      {data.length === 0 ? (
        <p className="hint">No {unit} in this range.</p>
      ) : (
        <dl>
          {data.map((d) => (
            <div key={d.key} className="bar-row">
              <dt>{d.key}</dt>
              <dd>
                <span className="bar" style={{ width: `${(d.value / max) * 70}%` }} aria-hidden="true" />
                <span className="bar-value">
                  {d.value.toLocaleString('en-US')} ({total === 0 ? 0 : Math.round((d.value * 100) / total)}%)
                </span>
              </dd>
            </div>
          ))}
        </dl>
      )}
    </figure>
  );
}
