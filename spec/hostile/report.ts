import { LIMITS, type HostileResult } from './runner.js';

/** The command that replays one seed of the hostile tier. */
export function replayCommand(seed: number): string {
  return `npm run chaos -- --hostile --seed ${seed}`;
}

/**
 * The run's summary: failures grouped by the rule they broke (a group names
 * the class of what broke it), each group with its seeds, one example, and
 * the hostile answers its seeds had in common; then memory and error counts.
 */
export function summarizeHostile(results: readonly HostileResult[]): string {
  const groups = new Map<string, { seeds: number[]; example: string }>();
  for (const r of results) {
    for (const p of r.problems) {
      const g = groups.get(p.group) ?? { seeds: [], example: `seed ${r.seed}: ${p.detail}` };
      if (!g.seeds.includes(r.seed)) g.seeds.push(r.seed);
      groups.set(p.group, g);
    }
  }
  // How many of a group's seeds took each kind of hostile answer, most frequent first: the likely culprits lead.
  const common = (seeds: readonly number[]): string => {
    const counts = new Map<string, number>();
    for (const s of seeds) for (const t of new Set((results.find((r) => r.seed === s)?.taken ?? []).map((x) => x.split(' ').slice(0, 2).join(' ')))) counts.set(t, (counts.get(t) ?? 0) + 1);
    return [...counts].sort(([, a], [, b]) => b - a).slice(0, 6).map(([t, n]) => `${t} ${n}/${seeds.length}`).join(', ') || 'none';
  };
  const errors: Record<string, number> = {};
  for (const r of results) for (const [k, n] of Object.entries(r.errors)) errors[k] = (errors[k] ?? 0) + n;
  const rss = results.map((r) => r.peakRssMiB).sort((a, b) => a - b);
  const failing = results.filter((r) => r.problems.length > 0);
  const lines = [
    `${results.length} seeds, ${failing.length} failing; peak RSS MiB p50 ${rss[Math.floor(rss.length / 2)] ?? '—'}, max ${rss.at(-1) ?? '—'} (bound ${LIMITS.rssMiB})`,
    `errors reported: ${Object.entries(errors).sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}`,
    ...[...groups.entries()]
      .sort(([, a], [, b]) => b.seeds.length - a.seeds.length)
      .flatMap(([group, g]) => [
        `FAIL ${group}: ${g.seeds.length} seeds [${g.seeds.sort((a, b) => a - b).join(', ')}]`,
        `  e.g. ${g.example}`,
        `  hostile answers its seeds took: ${common(g.seeds)}`,
        `  replay: ${replayCommand(g.seeds[0] as number)}`,
      ]),
  ];
  return lines.join('\n');
}
