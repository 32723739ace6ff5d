// The frame of every checkout page: one inline style sheet and one inline script, each allowed by
// its hash under a Content-Security-Policy that allows nothing else (no other origin, no inline
// code of anyone else's, no framing), and the headers that keep the page out of caches and
// referrers. Served over TLS, the page also asks browsers to keep to TLS (HSTS).
import crypto from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { escapeHtml } from '../pages.js';
import { CHECKOUT_SCRIPT, CHECKOUT_SCRIPT_HASH } from './script.js';

// Colours meet WCAG AA contrast on white (text #1a1a1a, muted #4a4a4a, error #b00020, button #0b57d0).
const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#f3f4f6}
main{max-width:28rem;margin:0 auto;padding:1.5rem 1rem 3rem}
.panel{background:#fff;border:1px solid #d0d4da;border-radius:12px;padding:1.5rem}
.test{background:#fff4ce;color:#5c3c00;border:1px solid #e0b100;border-radius:8px;padding:.5rem .75rem;margin:0 0 1rem;font-size:.9rem}
.merchant{margin:0;font-size:1rem;color:#4a4a4a;font-weight:600}
h1{font-size:1.6rem;margin:.25rem 0 .25rem}
.amount{font-size:2rem;font-weight:700;margin:0}
.currency{font-size:1rem;font-weight:600;color:#4a4a4a;margin-left:.35rem}
.description{color:#4a4a4a;margin:.25rem 0 1.25rem}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
.hint{display:block;font-weight:400;color:#4a4a4a;font-size:.9rem}
input{width:100%;font:inherit;font-size:1.1rem;padding:.7rem .75rem;border:1px solid #6b7280;border-radius:8px;background:#fff;color:#1a1a1a}
input:focus{outline:3px solid #0b57d0;outline-offset:1px;border-color:#0b57d0}
input[aria-invalid=true]{border-color:#b00020;border-width:2px}
.row{display:flex;gap:1rem}.row>div{flex:1;min-width:0}
.consent{display:flex;gap:.6rem;align-items:flex-start;font-weight:400;margin:1.25rem 0 0}
.consent input{width:1.25rem;height:1.25rem;flex:none;margin:.15rem 0 0;padding:0}
.error{color:#b00020;margin:.25rem 0 0;font-size:.95rem;min-height:0}
.error:empty{display:none}
.notice{border-radius:8px;padding:.75rem 1rem;margin:0 0 1rem}
.notice.bad{background:#fde7ea;color:#7a0015;border:1px solid #b00020}
.notice.good{background:#e6f4ea;color:#0f5223;border:1px solid #1e7b34}
.notice.wait{background:#e8f0fe;color:#123a7a;border:1px solid #0b57d0}
button,.button{display:block;width:100%;margin-top:1.5rem;padding:.85rem 1rem;font:inherit;font-size:1.1rem;font-weight:700;text-align:center;text-decoration:none;
  color:#fff;background:#0b57d0;border:0;border-radius:8px;cursor:pointer}
button:hover,.button:hover{background:#0842a0}
button:focus-visible,.button:focus-visible,a:focus-visible{outline:3px solid #1a1a1a;outline-offset:2px}
button[aria-disabled=true]{background:#4a4a4a}
.secondary{display:inline-block;margin-top:1rem;color:#0b57d0}
.foot{color:#4a4a4a;font-size:.85rem;text-align:center;margin-top:1rem}
`;
const STYLE_HASH = `'sha256-${crypto.createHash('sha256').update(STYLE).digest('base64')}'`;

const CSP = [
  "default-src 'none'",
  `script-src ${CHECKOUT_SCRIPT_HASH}`,
  `style-src ${STYLE_HASH}`,
  "base-uri 'none'",
  "frame-ancestors 'none'",
  // No form-action: browsers apply it to the redirects after a submit, and a customer action may
  // lead to the processor's page (3-D Secure) on another origin.
].join('; ');

export interface CheckoutPage {
  title: string;
  /** Already escaped HTML, inside the page's panel. */
  body: string;
  status?: number;
  /** The order's mode: test pages say so at the top. */
  livemode: boolean;
  /** Served through https (PUBLIC_BASE_URL): HSTS. */
  secure: boolean;
  /** The merchant's name and support contact, offered under the panel when there is one. */
  merchant?: { name: string; supportEmail: string | null };
}

export function sendCheckoutPage(reply: FastifyReply, page: CheckoutPage) {
  reply.header('content-security-policy', CSP);
  reply.header('x-frame-options', 'DENY');
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('cache-control', 'no-store');
  if (page.secure) reply.header('strict-transport-security', 'max-age=31536000');
  const banner = page.livemode ? '' : '<p class="test" role="note"><strong>Test mode.</strong> No real money moves; use a test card such as 4242 4242 4242 4242.</p>';
  const support = page.merchant?.supportEmail
    ? `<p class="foot contact">Questions about this order? Write to ${escapeHtml(page.merchant.name)} at <a href="mailto:${escapeHtml(page.merchant.supportEmail)}">${escapeHtml(page.merchant.supportEmail)}</a>.</p>`
    : '';
  const html =
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<meta name="robots" content="noindex"><title>${escapeHtml(page.title)}</title><style>${STYLE}</style></head>` +
    `<body><main>${banner}<div class="panel">${page.body}</div>${support}<p class="foot">Card details go straight to the payment service, never to the shop.</p></main>` +
    `<script>${CHECKOUT_SCRIPT}</script></body></html>`;
  return reply.code(page.status ?? 200).type('text/html; charset=utf-8').send(html);
}
