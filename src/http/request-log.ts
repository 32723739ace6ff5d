// What the one request line logs of a request's path.

/** Path parameters that open something by themselves (a checkout's or a customer action's token). */
const SECRET_PATH_PARAMS = ['token', 'challenge'];

// `_`, or `%5F` as a client that escapes more than it must sends it.
const U = '(?:_|%5[Ff])';
/**
 * Secrets by their shape, wherever a client puts them in the path: our API keys (sk_test_,
 * sk_live_, src/kernel/secrets.ts), the processors' keys a connector account holds (Stripe's sk_, pk_
 * and rk_ keys), webhook signing secrets (whsec_, src/domain/webhooks/signing.ts) and dashboard sign-in
 * codes (dsc_, src/domain/dashboard/sessions.ts). The prefix stays: it tells what was sent where.
 */
const KEY_SHAPED = new RegExp(`((?:sk|pk|rk)${U}(?:test|live)${U}|whsec${U}|dsc${U})[^/?#]+`, 'g');

/** The path for the request log: secret path parameters by their name, key-shaped segments redacted. */
export function loggedPath(url: string, params: unknown): string {
  let path = url.split('?')[0]!;
  for (const name of SECRET_PATH_PARAMS) {
    const value = (params as Record<string, unknown> | undefined)?.[name];
    if (typeof value === 'string' && value !== '') path = path.split(`/${encodeURIComponent(value)}`).join(`/:${name}`);
  }
  return path.replace(KEY_SHAPED, '$1[redacted]');
}
