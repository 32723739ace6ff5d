// Summarises a V8 .cpuprofile (node --cpu-prof): where the service's CPU time goes, by package
// and by function, as shares of the busy (non-idle) time.
// Run: npx tsx bench/tools/profile-summary.ts bench/results/prof/<file>.cpuprofile [top] [from-s] [to-s]
// With from/to (seconds since the profile's start) only the samples of that window count, e.g. one
// scenario's measured phase of a run that served several; `timeline` as top prints busy time per second.
import fs from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, topArg, fromArg, toArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: tsx bench/tools/profile-summary.ts <file.cpuprofile> [top|timeline] [from-s] [to-s]\n');
  process.exit(2);
}
const top = Number(topArg ?? 30);
const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
{
  // Keeps the samples of the window (times are the running sum of the deltas, in µs).
  const fromUs = Number(fromArg ?? 0) * 1e6;
  const toUs = toArg === undefined ? Infinity : Number(toArg) * 1e6;
  const busyPerS: number[] = [];
  let at = 0;
  const kept: [number, number][] = [];
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at >= fromUs && at < toUs) kept.push([id, delta]);
    const second = Math.floor(at / 1e6);
    if (byId.get(id)?.callFrame.functionName !== '(idle)') busyPerS[second] = (busyPerS[second] ?? 0) + delta;
  });
  if (topArg === 'timeline') {
    busyPerS.forEach((us, s) => process.stdout.write(`${s}s ${(us / 1e4).toFixed(0)}% busy\n`));
    process.exit(0);
  }
  profile.samples = kept.map(([id]) => id);
  profile.timeDeltas = kept.map(([, d]) => d);
}
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

function packageOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native/builtin)';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!;
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const s = /\/(src|bench|test)\/(.*)$/.exec(url);
  if (s) return `${s[1]}/${s[2]}`;
  return url;
}

let total = 0;
let idle = 0;
const byPackage = new Map<string, number>();
const byFunction = new Map<string, number>();
// Inclusive time per package: a sample counts once for each distinct package on its stack.
const inclusive = new Map<string, number>();
for (const [id, us] of selfUs) {
  const n = byId.get(id)!;
  total += us;
  if (n.callFrame.functionName === '(idle)') {
    idle += us;
    continue;
  }
  const pkg = packageOf(n.callFrame.url, n.callFrame.functionName);
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
  const fnKey = `${n.callFrame.functionName || '(anonymous)'}  ${pkg}:${n.callFrame.lineNumber + 1}`;
  byFunction.set(fnKey, (byFunction.get(fnKey) ?? 0) + us);
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const f = byId.get(cur)!.callFrame;
    const p = packageOf(f.url, f.functionName);
    if (!seen.has(p)) {
      seen.add(p);
      inclusive.set(p, (inclusive.get(p) ?? 0) + us);
    }
  }
}
const busy = total - idle;
const pct = (us: number) => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
const wallS = (profile.endTime - profile.startTime) / 1e6;
console.log(`profile ${wallS.toFixed(1)} s wall, ${(busy / 1e6).toFixed(1)} s busy (${((100 * busy) / total).toFixed(0)}% of samples)\n`);
console.log('self time by package');
for (const [k, v] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(v)}  ${k}`);
console.log('\ninclusive time by package (a frame of it anywhere on the stack)');
for (const [k, v] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(v)}  ${k}`);
console.log('\nself time by function');
for (const [k, v] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(v)}  ${k}`);
