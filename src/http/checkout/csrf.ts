// CSRF protection of the checkout form: a random cookie of the customer's browser (double submit)
// whose keyed digest, bound to the order's checkout token, the form carries. A form posted from
// another site has neither the cookie (SameSite) nor a digest for it; a digest taken from one
// checkout fails on another; and a browser that says the request is cross-site is refused anyway.
import crypto from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

const COOKIE = 'checkout_csrf';
/** Over TLS the cookie is `__Host-` prefixed: Secure, this host only, not settable by a sibling domain. */
const cookieName = (secure: boolean) => (secure ? `__Host-${COOKIE}` : COOKIE);
const VALUE = /^[A-Za-z0-9_-]{43}$/;

export interface Csrf {
  /** The form's token for this browser and checkout; sets the browser's cookie when it has none. */
  issue(req: FastifyRequest, reply: FastifyReply, checkoutToken: string): string;
  /** Whether the posted form came from our page in this browser. */
  verify(req: FastifyRequest, checkoutToken: string, posted: string | undefined): boolean;
}

/** `secret`: a server key (derived here for this one use); `secure`: the checkout is served over https. */
export function createCsrf(secret: Buffer, secure: boolean): Csrf {
  const key = Buffer.from(crypto.hkdfSync('sha256', secret, Buffer.alloc(0), 'checkout csrf v1', 32));
  const name = cookieName(secure);
  const digest = (checkoutToken: string, cookie: string) => crypto.createHmac('sha256', key).update(`${checkoutToken}.${cookie}`).digest('base64url');
  const cookieOf = (req: FastifyRequest): string | undefined => {
    for (const part of (req.headers.cookie ?? '').split(';')) {
      const eq = part.indexOf('=');
      if (eq > 0 && part.slice(0, eq).trim() === name) {
        const value = part.slice(eq + 1).trim();
        return VALUE.test(value) ? value : undefined;
      }
    }
    return undefined;
  };
  return {
    issue(req, reply, checkoutToken) {
      let cookie = cookieOf(req);
      if (!cookie) {
        cookie = crypto.randomBytes(32).toString('base64url');
        // Lax, not Strict: the customer comes back from their bank's page (another site) to this
        // page, and the form must then still match the cookie the browser holds; Lax still keeps
        // it off any cross-site POST.
        const attributes = ['Path=/', 'HttpOnly', 'SameSite=Lax', ...(secure ? ['Secure'] : [])];
        reply.header('set-cookie', `${name}=${cookie}; ${attributes.join('; ')}`);
      }
      return digest(checkoutToken, cookie);
    },
    verify(req, checkoutToken, posted) {
      if (req.headers['sec-fetch-site'] === 'cross-site') return false;
      const cookie = cookieOf(req);
      if (!cookie || posted === undefined) return false;
      const expected = Buffer.from(digest(checkoutToken, cookie));
      const given = Buffer.from(posted);
      return given.length === expected.length && crypto.timingSafeEqual(given, expected);
    },
  };
}
