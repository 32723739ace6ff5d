// A minimal PDF 1.4 document of plain text (Helvetica, A4, as many pages as the text needs): how a
// dispute's text evidence reaches Adyen, whose Disputes API takes defense documents as files only
// (supplyDefenseDocument, dispute-defense.ts). Written here rather than taken from a package: the
// format needed is a few objects, a content stream per page and a cross-reference table.

const PAGE = { width: 595, height: 842, margin: 56, fontSize: 10, leading: 14 };
const LINES_PER_PAGE = Math.floor((PAGE.height - 2 * PAGE.margin) / PAGE.leading);
const WRAP_AT = 95;

/** A string in a PDF literal: its delimiters escaped; outside Latin-1, '?' (the standard fonts have no more). */
function literal(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === '\\' || ch === '(' || ch === ')') out += `\\${ch}`;
    else if (code >= 0x20 && code < 0x7f) out += ch;
    else if (code >= 0xa0 && code <= 0xff) out += `\\${code.toString(8).padStart(3, '0')}`;
    else out += '?';
  }
  return out;
}

/** The text's lines, each paragraph wrapped at word boundaries (a word longer than a line is cut). */
export function wrapLines(text: string, width = WRAP_AT): string[] {
  const lines: string[] = [];
  for (const paragraph of text.replace(/\r\n?/g, '\n').split('\n')) {
    let line = '';
    for (const word of paragraph.split(/[ \t]+/).filter(Boolean)) {
      for (let rest = word; rest.length > 0; rest = rest.slice(width)) {
        const piece = rest.slice(0, width);
        if (line && line.length + 1 + piece.length > width) {
          lines.push(line);
          line = piece;
        } else line = line ? `${line} ${piece}` : piece;
      }
    }
    lines.push(line);
  }
  return lines;
}

/** `title` and `text` as a PDF file. */
export function textPdf(title: string, text: string): Buffer {
  const lines = [title, '', ...wrapLines(text)];
  const pages: string[][] = [];
  for (let i = 0; i < lines.length; i += LINES_PER_PAGE) pages.push(lines.slice(i, i + LINES_PER_PAGE));
  // Objects: 1 catalog, 2 page tree, 3 font, then per page its page object and its content stream.
  const objects: string[] = [];
  const pageIds = pages.map((_, i) => 4 + 2 * i);
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`;
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>';
  pages.forEach((page, i) => {
    const top = PAGE.height - PAGE.margin;
    const stream = [`BT /F1 ${PAGE.fontSize} Tf ${PAGE.leading} TL ${PAGE.margin} ${top} Td`, ...page.map((line) => `(${literal(line)}) '`), 'ET'].join('\n');
    objects[pageIds[i]!] = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${PAGE.width} ${PAGE.height}] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageIds[i]! + 1} 0 R >>`;
    objects[pageIds[i]! + 1] = `<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}\nendstream`;
  });
  let out = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = Buffer.byteLength(out, 'latin1');
    out += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id++) out += `${String(offsets[id]).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}
