// The parsers every setting goes through, so each kind of value is checked one way.

export class ConfigError extends Error {}

export function baseUrl(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  // An origin and nothing else: a path, query, fragment or user info would be silently dropped.
  if (!url || !['http:', 'https:'].includes(url.protocol) || raw.replace(/\/$/, '') !== url.origin) {
    throw new ConfigError(`${name} must be an http(s) origin (scheme, host, port) without a path, got ${JSON.stringify(raw)}`);
  }
  return url.origin;
}

export function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  const value = Number(raw);
  if (value < min) throw new ConfigError(`${name} must be at least ${min}, got ${value}`);
  return value;
}

export function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw !== 'true' && raw !== 'false') throw new ConfigError(`${name} must be true or false, got ${JSON.stringify(raw)}`);
  return raw === 'true';
}


export function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(raw)}`);
  return raw as T;
}

/**
 * A secret with a public development default that production must set: NODE_ENV=production
 * without it refuses to start rather than run on a key printed in the source.
 */
export function requireInProduction(env: NodeJS.ProcessEnv, name: string, why: string): void {
  if (env.NODE_ENV === 'production' && !env[name]) throw new ConfigError(`${name} must be set when NODE_ENV=production: ${why}`);
}
