// What the one request line logs of a request's path.

/** Path parameters that open something by themselves (a checkout's or a customer action's token). */
const SECRET_PATH_PARAMS = ['token', 'challenge'];

/** The path for the request log: secret path parameters by their name, never their value. */
export function loggedPath(url: string, params: unknown): string {
  let path = url.split('?')[0]!;
  for (const name of SECRET_PATH_PARAMS) {
    const value = (params as Record<string, unknown> | undefined)?.[name];
    if (typeof value === 'string' && value !== '') path = path.split(`/${encodeURIComponent(value)}`).join(`/:${name}`);
  }
  return path;
}
