// A small SVG line chart: one line per chain over time, y from zero (or the data's minimum when negative) to the
// largest value, the latest value of each series in the legend. Plain SVG attributes, no library, nothing to fetch.
import { html } from './html.js';

const WIDTH = 560;
const HEIGHT = 180;
const PAD = { left: 48, right: 12, top: 12, bottom: 24 };

function niceMax(value) {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  const step = [1, 2, 2.5, 5, 10].find((s) => s * power >= value) ?? 10;
  return step * power;
}

function time(ms) {
  return new Date(ms).toISOString().slice(11, 16);
}

/** series: [{name, color, points: [{t: epoch ms, v: number | null}]}]; format(v) for axis and legend. */
export function LineChart({ title, series, format = (v) => String(v), testId }) {
  const points = series.flatMap((s) => s.points.filter((p) => p.v !== null && Number.isFinite(p.v)));
  if (points.length === 0) {
    return html`<figure class="chart" data-testid=${testId}><figcaption>${title}</figcaption><p class="empty">No data yet.</p></figure>`;
  }
  const t0 = Math.min(...points.map((p) => p.t));
  const t1 = Math.max(...points.map((p) => p.t));
  const top = niceMax(Math.max(...points.map((p) => p.v)));
  const x = (t) => PAD.left + (t1 === t0 ? 0.5 : (t - t0) / (t1 - t0)) * (WIDTH - PAD.left - PAD.right);
  const y = (v) => PAD.top + (1 - v / top) * (HEIGHT - PAD.top - PAD.bottom);
  const grid = [0, 0.5, 1].map((f) => top * f);
  return html`<figure class="chart" data-testid=${testId}>
    <figcaption>
      ${title}
      <span class="legend">
        ${series.map((s) => {
          const last = s.points.filter((p) => p.v !== null).at(-1);
          return html`<span class="key"><i style=${{ background: s.color }}></i>${s.name} ${last ? format(last.v) : '—'}</span>`;
        })}
      </span>
    </figcaption>
    <svg viewBox=${`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label=${title}>
      ${grid.map(
        (v) => html`<g>
          <line x1=${PAD.left} x2=${WIDTH - PAD.right} y1=${y(v)} y2=${y(v)} class="grid" />
          <text x=${PAD.left - 6} y=${y(v) + 4} text-anchor="end" class="axis">${format(v)}</text>
        </g>`,
      )}
      <text x=${PAD.left} y=${HEIGHT - 6} class="axis">${time(t0)}</text>
      <text x=${WIDTH - PAD.right} y=${HEIGHT - 6} text-anchor="end" class="axis">${time(t1)} UTC</text>
      ${series.map((s) => {
        const drawn = s.points.filter((p) => p.v !== null && Number.isFinite(p.v));
        return html`<g>
          <polyline fill="none" stroke=${s.color} stroke-width="2" stroke-linejoin="round" points=${drawn.map((p) => `${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(' ')} />
          ${drawn.length ? html`<circle cx=${x(drawn.at(-1).t)} cy=${y(drawn.at(-1).v)} r="3" fill=${s.color}><title>${s.name}: ${format(drawn.at(-1).v)}</title></circle>` : null}
        </g>`;
      })}
    </svg>
  </figure>`;
}
