// GoCardless's HTTP API as the connector calls it: JSON envelopes named by resource
// (`{ "mandates": { … } }`), a Bearer access token, the pinned GoCardless-Version, and our ids as
// Idempotency-Key. Direct HTTP through the core's client, typed by the official SDK's types: the
// SDK (gocardless-nodejs) hard-codes its two hosts, so it cannot be pointed at
// GOCARDLESS_API_BASE_URL, takes no AbortSignal, and retries on its own through `got`.
//
// A creation GoCardless already holds under the key answers 409 idempotent_creation_conflict
// naming the object: it is adopted (fetched) rather than created again.
import { API_VERSION } from 'gocardless-nodejs/constants';
import type { HttpClient } from '../http.js';
import { connectorError, type ConnectorError } from '../types.js';

export const GOCARDLESS_API_VERSION = API_VERSION;
const HOSTS = { test: 'https://api-sandbox.gocardless.com', live: 'https://api.gocardless.com' } as const;

/** GoCardless's error envelope (https://developer.gocardless.com/api-reference/#api-usage-errors). */
interface ErrorBody {
  error?: {
    type?: string;
    message?: string;
    code?: number;
    errors?: { reason?: string; message?: string; field?: string; links?: { conflicting_resource_id?: string } }[];
  };
}

export type Answer<T> = { ok: true; value: T } | { ok: false; error: ConnectorError; status: number; reason: string | undefined };

export interface GoCardlessClientOptions {
  accessToken: string;
  livemode: boolean;
  /** GOCARDLESS_API_BASE_URL; unset: GoCardless's sandbox or live host by mode. */
  apiBaseUrl: string | undefined;
  http: HttpClient;
}

export function createGoCardlessClient(opts: GoCardlessClientOptions) {
  const base = (opts.apiBaseUrl ?? HOSTS[opts.livemode ? 'live' : 'test']).replace(/\/$/, '');
  const headers = (idempotencyKey?: string): Record<string, string> => ({
    authorization: `Bearer ${opts.accessToken}`,
    'gocardless-version': GOCARDLESS_API_VERSION,
    ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
  });

  async function call<T>(method: 'GET' | 'POST', path: string, key: string, body: unknown, signal: AbortSignal, idempotencyKey?: string): Promise<Answer<T>> {
    const answer = await opts.http.request(method, base + path, body, signal, headers(idempotencyKey));
    const envelope = answer.body as (Record<string, unknown> & ErrorBody) | undefined;
    const value = envelope?.[key];
    if (answer.status >= 200 && answer.status < 300) {
      if (value && typeof value === 'object') return { ok: true, value: value as T };
      return { ok: false, status: answer.status, reason: undefined, error: connectorError('invalid_response', `GoCardless answered ${answer.status} without ${key}`) };
    }
    const errors = envelope?.error?.errors ?? [];
    const held = errors.find((e) => e.reason === 'idempotent_creation_conflict')?.links?.conflicting_resource_id;
    // Created before under this key (a retry after a lost answer): adopt what GoCardless holds.
    if (answer.status === 409 && idempotencyKey && held) return call<T>('GET', `${path}/${encodeURIComponent(held)}`, key, undefined, signal);
    return { ok: false, status: answer.status, reason: errors[0]?.reason, error: classify(answer.status, envelope?.error) };
  }

  return {
    get: <T>(path: string, key: string, signal: AbortSignal) => call<T>('GET', path, key, undefined, signal),
    /** Creates under `idempotencyKey`; an object GoCardless already holds under it is fetched from `path/{id}` and answered instead. */
    create: <T>(path: string, key: string, data: unknown, idempotencyKey: string, signal: AbortSignal) =>
      call<T>('POST', path, key, { [key]: data }, signal, idempotencyKey),
    /** An action (`/mandates/{id}/actions/cancel`): repeating it changes nothing more. */
    action: <T>(path: string, key: string, signal: AbortSignal) => call<T>('POST', path, key, { data: {} }, signal),
  };
}

export type GoCardlessClient = ReturnType<typeof createGoCardlessClient>;

/**
 * An error answer as the core classifies it: a 429 is GoCardless saying it did nothing (the next
 * connector may take it); a 5xx is verified, never re-sent elsewhere (GoCardless may have acted);
 * any other refusal (validation, state, credentials, permissions) is the request's own.
 */
function classify(status: number, error: ErrorBody['error']): ConnectorError {
  const what = error?.message ?? `HTTP ${status}`;
  if (status === 429) return connectorError('processor_error', 'GoCardless answered 429 (rate limited); nothing was done');
  if (status >= 500) return connectorError('invalid_response', `GoCardless answered ${status} without saying whether it acted: ${what}`);
  return connectorError('request_rejected', `GoCardless refused the request (${status}${error?.type ? ` ${error.type}` : ''}): ${what}`);
}
