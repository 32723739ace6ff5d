// The client: openapi-fetch typed by the generated `paths`, with what every integration otherwise
// writes by hand — an Idempotency-Key on every POST that takes one, retries that reuse that key
// (409 idempotency_key_in_use, 429 after its Retry-After, 5xx), typed errors and paging.
import createFetchClient, { type Client, type MaybeOptionalInit, type MethodResponse } from 'openapi-fetch';
import type { HttpMethod, PathsWithMethod } from 'openapi-typescript-helpers';
import { idempotentOperations, type paths } from './openapi.js';
import { toApiError } from './errors.js';

export interface ClientOptions {
  /** sk_test_… or sk_live_… */
  apiKey: string;
  /** Where the service answers, e.g. `https://payments.example.com`. */
  baseUrl: string;
  /** Retries after the first attempt; 3 when absent. */
  maxRetries?: number;
  /** The first back-off when the answer names no Retry-After; doubled at each retry (500 ms when absent). */
  initialBackoffMs?: number;
  /** How to wait between attempts (tests record the delays); setTimeout when absent. */
  sleep?: (ms: number) => Promise<void>;
  fetch?: typeof globalThis.fetch;
}

type Paths = paths;
type RawClient = Client<Paths, 'application/json'>;
type InitParam<Init> = Record<string, never> extends Init ? [Init?] : [Init];
type Call<M extends HttpMethod> = <P extends PathsWithMethod<Paths, M>, I extends MaybeOptionalInit<Paths[P], M>>(
  path: P,
  ...init: InitParam<I>
) => Promise<MethodResponse<RawClient, M, P, I>>;

/** GET paths answering a page (`{object: 'list', data, has_more}`). */
export type ListPath = {
  [P in PathsWithMethod<Paths, 'get'>]: MethodResponse<RawClient, 'get', P> extends { object: 'list'; data: unknown[] } ? P : never;
}[PathsWithMethod<Paths, 'get'>];
export type ListItem<P extends ListPath> = MethodResponse<RawClient, 'get', P> extends { data: (infer T)[] } ? T : never;

const RETRIED_STATUSES = new Set([409, 429, 500, 502, 503, 504]);
const LONGEST_BACKOFF_MS = 30_000;
const idempotent = new Set(idempotentOperations);

/** Whether an answer is worth the same request again: the service let its Idempotency-Key go. */
async function retriable(response: Response): Promise<boolean> {
  if (!RETRIED_STATUSES.has(response.status)) return false;
  if (response.status !== 409) return true;
  const body = (await response.clone().json().catch(() => undefined)) as { error?: { code?: string } } | undefined;
  return body?.error?.code === 'idempotency_key_in_use';
}

function delayMs(response: Response, retry: number, initialMs: number): number {
  const retryAfter = Number(response.headers.get('retry-after'));
  if (response.headers.has('retry-after') && Number.isFinite(retryAfter) && retryAfter >= 0) return retryAfter * 1000;
  return Math.min(initialMs * 2 ** retry, LONGEST_BACKOFF_MS);
}

/** A fetch that sends a request again while the answer says it may: only GETs and keyed requests. */
function retryingFetch(options: ClientOptions): typeof globalThis.fetch {
  const send = options.fetch ?? globalThis.fetch;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const maxRetries = options.maxRetries ?? 3;
  return async (input, init) => {
    const request = new Request(input, init);
    const safe = request.method === 'GET' || request.headers.has('idempotency-key');
    for (let retry = 0; ; retry++) {
      const response = await send(request.clone());
      if (!safe || retry >= maxRetries || !(await retriable(response))) return response;
      await response.body?.cancel();
      await sleep(delayMs(response, retry, options.initialBackoffMs ?? 500));
    }
  };
}

export interface PaymentClient {
  GET: Call<'get'>;
  POST: Call<'post'>;
  PUT: Call<'put'>;
  PATCH: Call<'patch'>;
  DELETE: Call<'delete'>;
  /** Every object of a list, newest first, fetching the next page as the loop reaches it. */
  list<P extends ListPath>(path: P, ...init: InitParam<MaybeOptionalInit<Paths[P], 'get'>>): AsyncGenerator<ListItem<P>>;
  /** The openapi-fetch client underneath: `{data, error, response}` instead of throwing. */
  raw: RawClient;
}

export function createClient(options: ClientOptions): PaymentClient {
  const raw = createFetchClient<Paths, 'application/json'>({
    baseUrl: options.baseUrl,
    headers: { authorization: `Bearer ${options.apiKey}` },
    fetch: retryingFetch(options),
  });
  raw.use({
    onRequest({ request, schemaPath }) {
      // Made once, before the first attempt: every retry carries the same key.
      if (idempotent.has(`${request.method} ${schemaPath}`) && !request.headers.has('idempotency-key')) {
        request.headers.set('idempotency-key', crypto.randomUUID());
      }
      return request;
    },
  });
  const method = <M extends HttpMethod>(name: Uppercase<M>): Call<M> =>
    (async (path: string, init?: object) => {
      const call = raw[name as 'GET'] as unknown as (path: string, init?: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
      const { data, error, response } = await call(path, init);
      if (error !== undefined || !response.ok) throw toApiError(response.status, error, response.headers);
      return data;
    }) as unknown as Call<M>;
  const GET = method<'get'>('GET');
  return {
    GET,
    POST: method<'post'>('POST'),
    PUT: method<'put'>('PUT'),
    PATCH: method<'patch'>('PATCH'),
    DELETE: method<'delete'>('DELETE'),
    raw,
    async *list(path, ...init) {
      const base = (init[0] ?? {}) as { params?: { query?: Record<string, unknown> } & Record<string, unknown> };
      let startingAfter: string | undefined;
      for (;;) {
        const query = { ...base.params?.query, ...(startingAfter ? { starting_after: startingAfter } : {}) };
        const page = (await (GET as unknown as (p: string, i: object) => Promise<{ data: { id: string }[]; has_more: boolean }>)(path, {
          ...base,
          params: { ...base.params, query },
        }));
        for (const item of page.data) yield item as ListItem<typeof path>;
        const last = page.data.at(-1);
        if (!page.has_more || !last) return;
        startingAfter = last.id;
      }
    },
  };
}
