/** The markdown table of a run's JSON lines, as pasted into bench/README.md. */

type Line = Record<string, unknown>;
type Side = { rps: number; p50_ms: number; p99_ms: number; cpu_us_per_resp: number };

/** Renders the comparison lines as one table and the other lines as JSON below it. */
export function table(lines: Line[]): string {
  const rows = lines.filter((l) => l.podium && l.bare && (l.podium as Side).rps !== undefined);
  const head =
    '| scenario | dataset / db | Podium req/s | p50 / p99 ms | µs CPU/resp | bare req/s | bare µs CPU/resp | ratio req/s | ratio CPU | goal | checks | load |\n' +
    '|---|---|---|---|---|---|---|---|---|---|---|---|';
  const body = rows.map((l) => {
    const p = l.podium as Side;
    const b = l.bare as Side;
    const checks =
      l.lost !== undefined
        ? `lost ${l.lost} (${l.recorded} rows / ${l.answered} answers)`
        : l.exactly_once !== undefined
          ? `exactly once: ${l.exactly_once}`
          : '';
    return `| ${l.scenario} | ${l.dataset} / ${l.db} | ${p.rps} | ${p.p50_ms} / ${p.p99_ms} | ${p.cpu_us_per_resp} | ${b.rps} | ${b.cpu_us_per_resp} | ${l.ratio_rps} | ${l.ratio_cpu} | ${l.goal_ratio ?? '—'} | ${checks} | ${(l.load1 as number[]).join('→')} |`;
  });
  const others = lines.filter((l) => !rows.includes(l)).map((l) => `    ${JSON.stringify(l)}`);
  return [head, ...body, '', ...others].join('\n');
}
