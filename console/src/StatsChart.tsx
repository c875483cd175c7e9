import { CategoryScale, Chart, Legend, LinearScale, LineElement, PointElement, Tooltip } from 'chart.js';
import { Line } from 'react-chartjs-2';
import type { Series } from './stats.ts';

// Only the parts a line chart needs, so the bundle carries no other chart types.
Chart.register(CategoryScale, LinearScale, PointElement, LineElement, Tooltip, Legend);

/** Okabe–Ito: distinguishable with the common colour-vision deficiencies. */
const PALETTE = [
  '#0072B2',
  '#E69F00',
  '#009E73',
  '#D55E00',
  '#CC79A7',
  '#56B4E9',
  '#000000',
  '#8B6D00',
  '#999999',
];

/** A line per series over the days; the table next to it carries the same numbers for screen readers. */
export function StatsChart({
  days,
  series,
  label,
  summary,
}: {
  days: string[];
  series: Series[];
  label: (key: string) => string;
  summary: string;
}) {
  return (
    <div className="chart">
      <Line
        role="img"
        aria-label={summary}
        data={{
          labels: days,
          datasets: series.map((s, i) => ({
            label: label(s.key),
            data: s.values,
            borderColor: PALETTE[i % PALETTE.length],
            backgroundColor: PALETTE[i % PALETTE.length],
            borderDash: i >= PALETTE.length ? [6, 3] : undefined,
            // Straight segments: a smoothed curve would draw counts that never happened.
            tension: 0,
            pointRadius: days.length > 60 ? 0 : 3,
          })),
        }}
        options={{
          responsive: true,
          maintainAspectRatio: false,
          animation: false,
          interaction: { mode: 'index', intersect: false },
          plugins: { legend: { position: 'bottom' } },
          scales: { y: { beginAtZero: true, ticks: { precision: 0 } } },
        }}
      />
    </div>
  );
}
