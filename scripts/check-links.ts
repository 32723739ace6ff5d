// Checks the documentation's links: every relative link and #anchor in README.md and docs/*.md
// must resolve (the file exists inside the repository; the anchor is a heading of the target page,
// as GitHub slugs it), and README.md stays a short front door. Links to public sites (http, https,
// mailto) are not fetched: CI has no internet.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export const README_MAX_LINES = 300;

/** The pages checked: README.md and every Markdown file directly under docs/. */
export function docPages(root: string): string[] {
  const docs = path.join(root, 'docs');
  const pages = fs.existsSync(docs)
    ? fs.readdirSync(docs).filter((name) => name.endsWith('.md')).map((name) => path.join(docs, name))
    : [];
  return [path.join(root, 'README.md'), ...pages.sort()];
}

/** Lines outside fenced code blocks, with inline code spans blanked (their brackets are not links). */
function proseLines(markdown: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  let fence: string | null = null;
  markdown.split('\n').forEach((raw, index) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(raw)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) {
      fence = fence === null ? marker : null;
      return;
    }
    if (fence === null) out.push({ text: raw.replace(/`[^`]*`/g, (span) => ' '.repeat(span.length)), line: index + 1 });
  });
  return out;
}

/** GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingSlugs(markdown: string): Set<string> {
  const slugs = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | null = null;
  for (const raw of markdown.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(raw)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) {
      fence = fence === null ? marker : null;
      continue;
    }
    const heading = fence === null ? /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw)?.[1] : undefined;
    if (heading === undefined) continue;
    const base = heading
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    slugs.add(count === 0 ? base : `${base}-${count}`);
  }
  return slugs;
}

/** Every broken link of the given pages, as "file:line: message". */
export function checkLinks(root: string, pages = docPages(root)): string[] {
  const problems: string[] = [];
  const slugCache = new Map<string, Set<string>>();
  const slugsOf = (file: string) => {
    let slugs = slugCache.get(file);
    if (!slugs) slugCache.set(file, (slugs = headingSlugs(fs.readFileSync(file, 'utf8'))));
    return slugs;
  };
  const rootDir = path.resolve(root);
  for (const page of pages) {
    const where = path.relative(rootDir, page);
    for (const { text, line } of proseLines(fs.readFileSync(page, 'utf8'))) {
      for (const match of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
        const target = match[1]!;
        if (/^(https?:|mailto:)/i.test(target)) continue;
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
          problems.push(`${where}:${line}: ${target}: only http(s) and mailto links may leave the repository`);
          continue;
        }
        const [file, anchor] = target.split('#', 2) as [string, string | undefined];
        const resolved = file === '' ? page : path.resolve(path.dirname(page), decodeURIComponent(file));
        if (resolved !== rootDir && !resolved.startsWith(rootDir + path.sep)) {
          problems.push(`${where}:${line}: ${target}: leaves the repository`);
          continue;
        }
        if (!fs.existsSync(resolved)) {
          problems.push(`${where}:${line}: ${target}: no such file`);
          continue;
        }
        if (anchor === undefined) continue;
        if (!resolved.endsWith('.md')) problems.push(`${where}:${line}: ${target}: an anchor into a file that is not Markdown`);
        else if (!slugsOf(resolved).has(decodeURIComponent(anchor).toLowerCase()))
          problems.push(`${where}:${line}: ${target}: no heading #${anchor} in ${path.relative(rootDir, resolved)}`);
      }
    }
  }
  return problems;
}

/** README.md's length, when over the bound. */
export function checkReadmeLength(root: string): string[] {
  const lines = fs.readFileSync(path.join(root, 'README.md'), 'utf8').split('\n').length - 1;
  return lines > README_MAX_LINES ? [`README.md: ${lines} lines, at most ${README_MAX_LINES} (move the detail into docs/)`] : [];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = path.join(import.meta.dirname, '..');
  const pages = docPages(root);
  const problems = [...checkReadmeLength(root), ...checkLinks(root, pages)];
  for (const problem of problems) console.error(problem);
  console.log(`docs:check: ${pages.length} pages, ${problems.length} problem(s)`);
  process.exit(problems.length === 0 ? 0 : 1);
}
