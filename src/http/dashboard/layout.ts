// The dashboard's HTML: one layout (mode banner, navigation, sign-out), tables, definition lists,
// forms that always carry the CSRF token, and money shown in major units without floats. Every
// value goes through escapeHtml; nothing here builds markup from unescaped input.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EventView } from '../../events/service.js';
import { escapeHtml } from '../pages.js';
import { CURRENCY_EXPONENTS } from '../../kernel/currencies.js';
import { ApiError } from '../../kernel/errors.js';

/** What every signed-in page needs from the request: the mode for the banner, the CSRF token for forms. */
export interface View {
  livemode: boolean;
  accountName: string;
  csrf: string;
}

/** Markup already escaped; `html` is the only way to make one from text. */
export type Html = { readonly __html: string };
export const raw = (text: string): Html => ({ __html: text });
const isHtml = (value: unknown): value is Html => typeof value === 'object' && value !== null && '__html' in value;

/** A template tag: interpolated values are escaped unless they are Html (or arrays of it). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return raw(out);
}

function render(value: unknown): string {
  if (value === undefined || value === null || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  if (isHtml(value)) return value.__html;
  return escapeHtml(String(value));
}

// Styles come from our own origin only (style-src 'self'): no inline style, no script at all.
export const CSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CSP)
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store');
}

const NAV: [string, string][] = [
  ['/dashboard/payment-orders', 'Payment orders'],
  ['/dashboard/payments', 'Payments'],
  ['/dashboard/disputes', 'Disputes'],
  ['/dashboard/customers', 'Customers'],
  ['/dashboard/payouts', 'Payouts'],
  ['/dashboard/beneficiaries', 'Beneficiaries'],
  ['/dashboard/mandates', 'Mandates'],
  ['/dashboard/balance', 'Balance'],
  ['/dashboard/reconciliation', 'Reconciliation'],
  ['/dashboard/events', 'Events'],
  ['/dashboard/webhook-endpoints', 'Webhooks'],
  ['/dashboard/routing', 'Routing'],
];

function document(title: string, body: Html): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)} · Dashboard</title><link rel="stylesheet" href="/dashboard/assets/dashboard.css"></head><body>${body.__html}</body></html>`;
}

export function modeBanner(livemode: boolean): Html {
  return livemode
    ? html`<div class="banner live" role="status"><strong>Live mode</strong> — real customers, real money.</div>`
    : html`<div class="banner test" role="status"><strong>Test mode</strong> — simulated processors and banks; nothing here moves real money.</div>`;
}

/** Sends a signed-in page: the mode banner on top, the navigation, then `body`. */
export function sendView(reply: FastifyReply, view: View, title: string, body: Html, opts: { status?: number; notice?: string; current?: string } = {}) {
  const nav = NAV.map(([href, label]) => html`<a href="${href}"${opts.current === href ? raw(' aria-current="page"') : ''}>${label}</a>`);
  const page = html`${modeBanner(view.livemode)}
<header class="top"><span class="account">${view.accountName} · ${view.livemode ? 'live' : 'test'}</span>
<nav aria-label="Dashboard">${nav}</nav>
<form method="get" action="/dashboard/search" role="search" class="search"><label for="search-q" class="visually-hidden">Search by reference or id</label><input id="search-q" name="q" type="search" placeholder="Reference or id"><button type="submit">Search</button></form>
${postForm('/dashboard/sign-out', view.csrf, [], 'Sign out', 'link')}</header>
<main><h1>${title}</h1>${opts.notice ? html`<p class="notice" role="status">${opts.notice}</p>` : ''}${body}</main>`;
  return securityHeaders(reply).code(opts.status ?? 200).type('text/html; charset=utf-8').send(document(title, page));
}

/** A page for someone not signed in (sign-in, errors before a session exists). */
export function sendBare(reply: FastifyReply, title: string, body: Html, status = 200) {
  return securityHeaders(reply).code(status).type('text/html; charset=utf-8').send(document(title, html`<main class="narrow"><h1>${title}</h1>${body}</main>`));
}

export type Field =
  | { hidden: string; value: string }
  | { name: string; label: string; value?: string; type?: string; required?: boolean; placeholder?: string; options?: string[]; autocomplete?: string };

/** A POST form with the CSRF token; fields are labelled inputs or selects, or hidden values. */
export function postForm(action: string, csrf: string, fields: Field[], submit: string, style: 'button' | 'link' | 'danger' = 'button'): Html {
  const inputs = fields.map((f) => {
    if ('hidden' in f) return html`<input type="hidden" name="${f.hidden}" value="${f.value}">`;
    const id = `f-${action.replace(/[^a-z0-9]+/gi, '-')}-${f.name}`;
    const control = f.options
      ? html`<select id="${id}" name="${f.name}">${f.options.map((o) => html`<option${o === f.value ? raw(' selected') : ''}>${o}</option>`)}</select>`
      : html`<input id="${id}" name="${f.name}" type="${f.type ?? 'text'}" value="${f.value ?? ''}"${f.required ? raw(' required') : ''}${f.placeholder ? html` placeholder="${f.placeholder}"` : ''}${f.autocomplete ? html` autocomplete="${f.autocomplete}"` : ''}>`;
    return html`<label for="${id}">${f.label}</label>${control}`;
  });
  return html`<form method="post" action="${action}" class="form ${style}"><input type="hidden" name="csrf" value="${csrf}">${inputs}<button type="submit">${submit}</button></form>`;
}

/** A GET form (filters, search): no token, nothing changes. */
export function getForm(action: string, fields: Field[], submit: string): Html {
  const inputs = fields.map((f) => {
    if ('hidden' in f) return html`<input type="hidden" name="${f.hidden}" value="${f.value}">`;
    const id = `q-${f.name}`;
    const control = f.options
      ? html`<select id="${id}" name="${f.name}"><option value="">any</option>${f.options.map((o) => html`<option${o === f.value ? raw(' selected') : ''}>${o}</option>`)}</select>`
      : html`<input id="${id}" name="${f.name}" type="${f.type ?? 'search'}" value="${f.value ?? ''}"${f.placeholder ? html` placeholder="${f.placeholder}"` : ''}>`;
    return html`<label for="${id}">${f.label}</label>${control}`;
  });
  return html`<form method="get" action="${action}" class="form filters" role="search">${inputs}<button type="submit">${submit}</button></form>`;
}

export interface Column<T> {
  label: string;
  cell: (row: T) => unknown;
  /** Long text (errors, URLs): may wrap; other cells stay on one line and the table scrolls. */
  wrap?: boolean;
}

export function table<T>(rows: T[], columns: Column<T>[], empty = 'Nothing yet.'): Html {
  if (rows.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`<div class="scroll" tabindex="0"><table><thead><tr>${columns.map((c) => html`<th scope="col">${c.label}</th>`)}</tr></thead><tbody>${rows.map(
    (row) => html`<tr>${columns.map((c) => html`<td${c.wrap ? raw(' class="wrap"') : ''}>${c.cell(row)}</td>`)}</tr>`,
  )}</tbody></table></div>`;
}

/** A definition list of label → value (values may be Html). */
export function facts(entries: [string, unknown][]): Html {
  return html`<dl class="facts">${entries.map(([label, value]) => html`<dt>${label}</dt><dd>${value === null || value === undefined || value === '' ? '—' : value}</dd>`)}</dl>`;
}

export const link = (href: string, text: string): Html => html`<a href="${href}">${text}</a>`;
/** A link to an object's page, its id in the monospace of ids. */
export const idLink = (href: string, id: string): Html => html`<a href="${href}"><code>${id}</code></a>`;
export const code = (text: unknown): Html => html`<code>${text}</code>`;
export const status = (value: string): Html => html`<span class="status s-${value}">${value}</span>`;
// Scrolling regions take the keyboard focus, so they can be scrolled without a mouse.
export const json = (value: unknown): Html => html`<pre class="json" tabindex="0">${JSON.stringify(value, null, 2)}</pre>`;
export const when = (iso: unknown): Html => (typeof iso === 'string' ? html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}</time>` : html`—`);

/** A minor-unit amount in major units (1999 EUR → "19.99 EUR"), by string arithmetic. */
export function money(amount: number, currency: string): string {
  const exponent = CURRENCY_EXPONENTS.get(currency) ?? 2;
  const digits = String(Math.abs(amount)).padStart(exponent + 1, '0');
  const text = exponent ? `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}` : digits;
  return `${amount < 0 ? '-' : ''}${text} ${currency}`;
}

/** A major-unit amount typed by a person ("5", "5.5", "5.50") in the currency's minor unit; a typed 400 otherwise. */
export function parseMoney(text: string, currency: string, param = 'amount'): number {
  const exponent = CURRENCY_EXPONENTS.get(currency) ?? 2;
  const match = /^(\d{1,12})(?:\.(\d+))?$/.exec(text.trim());
  if (!match || (match[2] ?? '').length > exponent) {
    throw new ApiError('parameter_invalid', { param, message: `${param} must be an amount in ${currency} with at most ${exponent} decimals, like ${money(500, currency).split(' ')[0]}.` });
  }
  return Number(match[1]! + (match[2] ?? '').padEnd(exponent, '0'));
}

/** Next/previous links of a list page, keeping its filters. */
export function pager(path: string, query: Record<string, string | undefined>, page: { data: { id: string }[]; has_more: boolean }): Html {
  const keep = Object.entries(query).filter(([k, v]) => v && k !== 'starting_after' && k !== 'ending_before') as [string, string][];
  const href = (extra: [string, string]) => `${path}?${new URLSearchParams([...keep, extra]).toString()}`;
  const first = page.data[0];
  const last = page.data[page.data.length - 1];
  const back = query.starting_after || (query.ending_before && page.has_more);
  const next = query.ending_before || page.has_more;
  return html`<nav class="pager" aria-label="Pages">${back && first ? link(href(['ending_before', first.id]), '← Newer') : ''} ${next && last ? link(href(['starting_after', last.id]), 'Older →') : ''}</nav>`;
}

/** The notice a page shows after a form's redirect (`?notice=refunded`): only fixed texts, never the query's own. */
export const noticeOf = (req: FastifyRequest, notices: Record<string, string>): string | undefined => {
  const key = String((req.query as { notice?: unknown }).notice);
  return Object.hasOwn(notices, key) ? notices[key] : undefined;
};

/** The events of some objects, newest first, linking each to its deliveries. */
export function timeline(events: EventView[]): Html {
  return table(events, [
    { label: 'When', cell: (e) => when(e.created_at) },
    { label: 'Type', cell: (e) => code(e.type) },
    { label: 'Event', cell: (e) => idLink(`/dashboard/events/${e.id}`, e.id) },
    { label: 'Object', cell: (e) => code(e.data.object.id) },
  ], 'No events.');
}
