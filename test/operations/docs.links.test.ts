// The documentation's links (scripts/check-links.ts, `npm run docs:check`): the repository's own
// pages resolve, and the checker does catch what it exists for.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkLinks, checkReadmeLength, headingSlugs } from '../../scripts/check-links.js';

const root = path.join(import.meta.dirname, '..', '..');

describe('docs:check', () => {
  it('finds every relative link and anchor of README.md and docs/ resolving, and README.md short', () => {
    expect([...checkReadmeLength(root), ...checkLinks(root)]).toEqual([]);
  });

  it('slugs headings as GitHub does', () => {
    const slugs = headingSlugs('# Making events happen: `trigger`\n## The deploy/ folder\n## Stopping (SIGTERM, SIGINT)\n## A\n## A\n```\n# not a heading\n```\n');
    expect([...slugs]).toEqual(['making-events-happen-trigger', 'the-deploy-folder', 'stopping-sigterm-sigint', 'a', 'a-1']);
  });

  it('reports a missing file, a missing anchor, a link out of the repository and a long README', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-check-'));
    fs.mkdirSync(path.join(dir, 'docs'));
    fs.writeFileSync(path.join(dir, 'README.md'), '# Title\n\n[ok](docs/a.md#a-page) [gone](docs/b.md)\n'.padEnd(400, '\n'));
    fs.writeFileSync(
      path.join(dir, 'docs', 'a.md'),
      '# A page\n\n[up](../README.md#title) [nope](#nowhere) [out](../../shared/API.md) [web](https://example.com) `[code](x.md)`\n',
    );
    expect(checkLinks(dir)).toEqual([
      'README.md:3: docs/b.md: no such file',
      'docs/a.md:3: #nowhere: no heading #nowhere in docs/a.md',
      'docs/a.md:3: ../../shared/API.md: leaves the repository',
    ]);
    expect(checkReadmeLength(dir)).toEqual([expect.stringMatching(/^README.md: 3\d\d lines, at most 300/)]);
  });
});
