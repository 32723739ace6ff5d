// The few HTML pages the service serves to a customer's browser (customer actions): plain forms,
// no script, no style sheet, nothing from another origin, under a Content-Security-Policy that
// allows none of those, never framed by another site.
import type { FastifyReply } from 'fastify';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** A POST form of hidden `fields` to `action` with one submit button per entry of `buttons` (name=value). */
export function postForm(action: string, fields: Record<string, string>, buttons: { name: string; value: string; label: string }[]): string {
  const hidden = Object.entries(fields).map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`);
  const submits = buttons.map((b) => `<button type="submit" name="${escapeHtml(b.name)}" value="${escapeHtml(b.value)}">${escapeHtml(b.label)}</button>`);
  return `<form method="post" action="${escapeHtml(action)}">${[...hidden, ...submits].join('')}</form>`;
}

/** Sends `body` (already escaped HTML) as a page titled `title`. */
export function sendPage(reply: FastifyReply, title: string, body: string, status = 200) {
  // No form-action: browsers apply it to the redirects after a submit, and ours end on the merchant's site.
  reply.header('content-security-policy', "default-src 'none'; base-uri 'none'; frame-ancestors 'none'");
  reply.header('x-frame-options', 'DENY');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('cache-control', 'no-store');
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
  return reply.code(status).type('text/html; charset=utf-8').send(html);
}

/** A content-type parser for a customer's browser's forms: their fields as strings, never read as an outcome. */
export function formFields(_req: unknown, body: string | Buffer, done: (err: Error | null, fields: Record<string, string>) => void): void {
  done(null, Object.fromEntries(new URLSearchParams(String(body))));
}

/** Form fields (application/x-www-form-urlencoded) and query parameters, as one string map; the body wins. */
export function requestParams(query: unknown, body: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const source of [query, body]) {
    if (source === null || typeof source !== 'object') continue;
    for (const [key, value] of Object.entries(source)) if (typeof value === 'string') out[key] = value;
  }
  return out;
}
