// Helpers of the hosted-checkout tests: the customer's browser by hand (cookie, form fields, one
// hop at a time, redirects not followed), for the HTTP tests; the browser tests drive Chromium.
import { expect } from 'vitest';

export interface CheckoutVisit {
  status: number;
  html: string;
  headers: Headers;
  location: string | null;
  /** The browser's CSRF cookie (`name=value`), as set by this answer or carried in. */
  cookie: string | undefined;
  /** The form's hidden fields, when the page has a form. */
  csrf?: string;
  attempt?: string;
}

const hidden = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];

/** One hop of the customer's browser. */
export async function visit(url: string, opts: { cookie?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<CheckoutVisit> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.cookie) headers.cookie = opts.cookie;
  if (opts.form) headers['content-type'] = 'application/x-www-form-urlencoded';
  const res = await fetch(url, { method: opts.form ? 'POST' : 'GET', headers, redirect: 'manual', body: opts.form ? new URLSearchParams(opts.form).toString() : undefined });
  const html = await res.text();
  const set = res.headers.get('set-cookie');
  return {
    status: res.status,
    html,
    headers: res.headers,
    location: res.headers.get('location'),
    cookie: set ? set.split(';')[0] : opts.cookie,
    csrf: hidden(html, 'csrf'),
    attempt: hidden(html, 'attempt'),
  };
}

export const CARD = { number: '4242 4242 4242 4242', expiry: `12 / ${String((new Date().getUTCFullYear() + 2) % 100).padStart(2, '0')}`, cvc: '123' };

/** Opens the checkout, then sends its form with `card` (and the consent box's `save_card` when ticked); the POST's answer (not followed). */
export async function payThroughCheckout(checkoutUrl: string, card: Partial<typeof CARD> & { save_card?: string } = {}) {
  const page = await visit(checkoutUrl);
  expect(page.status, page.html).toBe(200);
  expect(page.csrf).toBeTruthy();
  const form = { ...CARD, ...card, csrf: page.csrf!, attempt: page.attempt! };
  const answer = await visit(checkoutUrl, { cookie: page.cookie, form });
  return { page, form, answer };
}

/** Where a relative Location leads. */
export const resolve = (base: string, location: string | null) => new URL(location!, base).href;

/** The visible text of a page, tags stripped, for reading what the customer reads. */
export const textOf = (html: string) =>
  html
    .replace(/<style>[\s\S]*?<\/style>|<script>[\s\S]*?<\/script>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
