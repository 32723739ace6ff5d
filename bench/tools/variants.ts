// Runs `npm run bench -- orders` under several environment variants, interleaved round by round
// (so that the machine's noise spreads evenly over them), and prints the median of each figure.
// Run: npx tsx bench/tools/variants.ts <rounds> 'name:ENV=a ENV2=b' 'other:ENV=c' …
//   e.g. npx tsx bench/tools/variants.ts 3 'base:' 'pool32:DATABASE_POOL_SIZE=32'
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../lib/service.js';

const [roundsArg, ...specs] = process.argv.slice(2);
const rounds = Number(roundsArg);
if (!Number.isInteger(rounds) || rounds < 1 || specs.length === 0) {
  process.stderr.write("usage: tsx bench/tools/variants.ts <rounds> 'name:ENV=value …' …\n");
  process.exit(2);
}
const variants = specs.map((spec) => {
  const [name, rest = ''] = spec.split(/:(.*)/s) as [string, string?];
  const env: Record<string, string> = {};
  for (const pair of rest.split(/\s+/).filter(Boolean)) {
    const i = pair.indexOf('=');
    env[pair.slice(0, i)] = pair.slice(i + 1).replace(/\+/g, ' ');
  }
  return { name, env };
});

interface Run {
  okPerS: number;
  p50: number;
  p99: number;
  tps: number;
  ratio: number;
  serviceCores: number;
  postgresCores: number;
  machineCores: number;
  /** Most cores used by other work during any phase of the run. */
  otherCores: number;
}
const runs = new Map<string, Run[]>(variants.map((v) => [v.name, []]));
const latest = path.join(ROOT, 'bench', 'results', 'latest.json');

for (let round = 1; round <= rounds; round++) {
  for (const v of variants) {
    process.stderr.write(`round ${round}/${rounds}: ${v.name} ${JSON.stringify(v.env)}\n`);
    fs.rmSync(latest, { force: true });
    const res = spawnSync('npx', ['tsx', 'bench/run.ts', 'orders'], {
      cwd: ROOT,
      env: { ...process.env, ...v.env },
      stdio: ['ignore', 'inherit', 'inherit'],
      timeout: 15 * 60_000,
    });
    if (res.status !== 0 || !fs.existsSync(latest)) {
      process.stderr.write(`  run failed (status ${res.status})\n`);
      continue;
    }
    const r = JSON.parse(fs.readFileSync(latest, 'utf8')).results[0];
    runs.get(v.name)!.push({
      okPerS: r.service.okPerS,
      p50: r.service.latencyMs.p50,
      p99: r.service.latencyMs.p99,
      tps: r.pgbench.tps,
      ratio: r.ratio,
      serviceCores: r.service.cpu.processCores,
      postgresCores: r.service.cpu.postgresCores,
      machineCores: r.service.cpu.machineCores,
      otherCores: Math.max(
        ...[...r.service.cpuPerRound, ...r.pgbench.cpuPerRound].map(
          (c: { foreignCores?: number; postgresOtherCores?: number }) => (c.foreignCores ?? 0) + (c.postgresOtherCores ?? 0),
        ),
      ),
    });
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const cols: [keyof Run, string, number][] = [
  ['okPerS', 'orders/s', 1],
  ['p50', 'p50 ms', 1],
  ['p99', 'p99 ms', 1],
  ['tps', 'pgbench tps', 1],
  ['ratio', 'ratio', 3],
  ['serviceCores', 'svc cores', 2],
  ['postgresCores', 'pg cores', 2],
  ['machineCores', 'busy cores', 2],
  ['otherCores', 'other cores', 2],
];
const CLEAN = 0.3;
const width = Math.max(8, ...variants.map((v) => v.name.length));
function table(title: string, pick: (r: Run) => boolean) {
  console.log(`\n${title}`);
  console.log(['variant'.padEnd(width), ' n', ...cols.map(([, h]) => h.padStart(11)), '  ratio min..max'].join(' '));
  for (const v of variants) {
    const rs = runs.get(v.name)!.filter(pick);
    const ratios = rs.map((r) => r.ratio);
    console.log(
      [
        v.name.padEnd(width),
        String(rs.length).padStart(2),
        ...cols.map(([k, , d]) => median(rs.map((r) => r[k])).toFixed(d).padStart(11)),
        rs.length ? `  ${Math.min(...ratios).toFixed(3)}..${Math.max(...ratios).toFixed(3)}` : '',
      ].join(' '),
    );
  }
}
table(`medians of all ${rounds} round(s)`, () => true);
table(`medians of the runs where other work stayed under ${CLEAN} cores in every phase`, (r) => r.otherCores < CLEAN);
for (const v of variants) {
  console.log(`${v.name}: ratios ${runs.get(v.name)!.map((r) => `${r.ratio.toFixed(3)}${r.otherCores >= CLEAN ? '*' : ''}`).join(' ')}`);
}
console.log('(* = disturbed by other work)');
