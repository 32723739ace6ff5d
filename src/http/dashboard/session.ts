// Signing in to the dashboard and proving it at every request. The browser holds a random session
// token in a cookie (HttpOnly, SameSite=Strict, Path=/dashboard, Secure whenever the service is
// reached over TLS); the key or one-time code that opened the session is posted once and never
// stored, logged or put in a URL. Every form carries a CSRF token: before sign-in, a random value
// also held in a cookie (double submit); after, an HMAC of the session token, so it needs no
// storage and dies with the session.
import crypto from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import type { Db } from '../../storage/db.js';
import { ApiError } from '../../kernel/errors.js';
import { authenticate } from '../auth.js';
import { findPrincipal } from '../../domain/accounts/service.js';
import { findSession, signInWithCode, signInWithKey, signOut, SESSION_TTL_MS } from '../../domain/dashboard/sessions.js';
import { html, postForm, sendBare, type View } from './layout.js';
import type { App } from '../types.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** A signed-in dashboard request: its view (mode, account, CSRF token) and the session token. */
    dashboard?: { view: View; token: string };
  }
}

const SESSION_COOKIE = 'dashboard_session';
const SIGN_IN_COOKIE = 'dashboard_sign_in';
export const HOME = '/dashboard/payments';
const SIGN_IN = '/dashboard/sign-in';

export function readCookies(req: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0) out[part.slice(0, at).trim()] = part.slice(at + 1).trim();
  }
  return out;
}

/** Secure whenever the browser reaches us over TLS: directly, or through the operator's terminator (PUBLIC_BASE_URL https). */
function overTls(req: FastifyRequest, config: Pick<Config, 'publicBaseUrl'>): boolean {
  return req.protocol === 'https' || (config.publicBaseUrl?.startsWith('https:') ?? false);
}

function setCookie(reply: FastifyReply, secure: boolean, name: string, value: string, maxAgeS: number) {
  const attributes = [`${name}=${value}`, 'Path=/dashboard', 'HttpOnly', 'SameSite=Strict', `Max-Age=${maxAgeS}`];
  if (secure) attributes.push('Secure');
  const previous = reply.getHeader('set-cookie');
  const list = previous === undefined ? [] : Array.isArray(previous) ? previous : [String(previous)];
  reply.header('set-cookie', [...list, attributes.join('; ')]);
}

export function csrfFor(sessionToken: string): string {
  return crypto.createHmac('sha256', sessionToken).update('dashboard csrf').digest('base64url');
}

function sameSecret(a: string | undefined, b: string): boolean {
  if (typeof a !== 'string' || a.length !== b.length) return false;
  return crypto.timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

export function formOf(body: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (body === null || typeof body !== 'object') return out;
  for (const [key, value] of Object.entries(body)) if (typeof value === 'string') out[key] = value;
  return out;
}

/**
 * The hook in front of every dashboard page but sign-in: the session behind the cookie becomes the
 * request's tenancy (req.ctx, as an API key's would), and a POST must carry the session's CSRF token.
 */
export function sessionGuard(db: Db) {
  return async function guard(req: FastifyRequest, reply: FastifyReply) {
    const token = readCookies(req)[SESSION_COOKIE];
    const session = token ? await findSession(db, token) : undefined;
    if (!session || !token) {
      if (req.method === 'GET') return reply.redirect(SIGN_IN, 303);
      return sendBare(reply, 'Signed out', html`<p class="error">Your session has ended. <a href="${SIGN_IN}">Sign in</a> again.</p>`, 401);
    }
    req.ctx = { accountId: session.accountId, livemode: session.livemode, requestId: req.id };
    req.dashboard = { token, view: { livemode: session.livemode, accountName: session.accountName, csrf: csrfFor(token) } };
    // The CSRF token stands for the session (a digest of it) without keeping the session's secret.
    req.identifyWriter(`session:${req.dashboard.view.csrf}`);
    if (req.method === 'POST' && !sameSecret(formOf(req.body).csrf, req.dashboard.view.csrf)) throw csrfRefused();
  };
}

const csrfRefused = () => new ApiError('permission_denied', { message: 'This form did not come from your dashboard session (missing or wrong CSRF token). Reload the page and try again.' });

function signInPage(reply: FastifyReply, secure: boolean, message?: string, status = 200) {
  const nonce = crypto.randomBytes(24).toString('base64url');
  setCookie(reply, secure, SIGN_IN_COOKIE, nonce, 3600);
  return sendBare(
    reply,
    'Sign in to the dashboard',
    html`${message ? html`<p class="error" role="alert">${message}</p>` : ''}
<p>Use a secret API key (<code>sk_test_…</code> for test mode, <code>sk_live_…</code> for live mode), or a one-time code from
<code>npm run cli -- dashboard session ACCT_ID --mode test</code>. The dashboard shows that key's account and mode only.</p>
${postForm(SIGN_IN, nonce, [{ name: 'key', label: 'Secret key', type: 'password', autocomplete: 'off' }], 'Sign in with key')}
${postForm(SIGN_IN, nonce, [{ name: 'code', label: 'One-time code', type: 'password', autocomplete: 'one-time-code' }], 'Sign in with code')}`,
    status,
  );
}

export function registerSessionRoutes(scope: App, db: Db, config: Pick<Config, 'publicBaseUrl'>) {
  scope.get(SIGN_IN, async (req, reply) => {
    const token = readCookies(req)[SESSION_COOKIE];
    if (token && (await findSession(db, token))) return reply.redirect(HOME, 303);
    return signInPage(reply, overTls(req, config));
  });

  scope.post(SIGN_IN, async (req, reply) => {
    const secure = overTls(req, config);
    const form = formOf(req.body);
    const nonce = readCookies(req)[SIGN_IN_COOKIE];
    if (!nonce || !sameSecret(form.csrf, nonce)) return signInPage(reply, secure, 'The sign-in form expired or did not come from this page. Try again.', 403);
    let token: string | undefined;
    if (form.key) {
      // The API's own key check (malformed, unknown, revoked, expired, suspended), without its cache.
      const principal = await authenticate({ lookup: (hash) => findPrincipal(db, hash) }, `Bearer ${form.key.trim()}`).catch(() => undefined);
      if (principal) token = await signInWithKey(db, principal);
    } else if (form.code) {
      token = await signInWithCode(db, form.code.trim());
    }
    if (!token) return signInPage(reply, secure, form.key ? 'That key is not valid.' : 'That code is not valid, was used already or has expired.', 401);
    setCookie(reply, secure, SIGN_IN_COOKIE, '', 0);
    setCookie(reply, secure, SESSION_COOKIE, token, SESSION_TTL_MS / 1000);
    return reply.redirect(HOME, 303);
  });

  scope.post('/dashboard/sign-out', async (req, reply) => {
    const token = readCookies(req)[SESSION_COOKIE];
    if (!token || !sameSecret(formOf(req.body).csrf, csrfFor(token))) throw csrfRefused();
    await signOut(db, token);
    setCookie(reply, overTls(req, config), SESSION_COOKIE, '', 0);
    return reply.redirect(SIGN_IN, 303);
  });
}
