// Standard Webhooks signatures (https://www.standardwebhooks.com): the signed content is
// "{webhook-id}.{webhook-timestamp}.{body}", HMAC-SHA256 with the secret's bytes (the base64 after
// `whsec_`), sent as `v1,<base64>`; several valid secrets give several space-separated signatures.
import crypto from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

/** `whsec_` + base64 of 32 random bytes, the format the published libraries accept. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + crypto.randomBytes(32).toString('base64');
}

function secretBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

// A secret's bytes as a key object, made once: importing the key was a good part of each
// request's HMAC, and a backlog signs many requests with the same few secrets. Bounded: dropped
// whole when full.
const KEYS_CAP = 10_000;
const keys = new Map<string, crypto.KeyObject>();

function hmacKey(secret: string): crypto.KeyObject {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.createSecretKey(secretBytes(secret));
    if (keys.size >= KEYS_CAP) keys.clear();
    keys.set(secret, key);
  }
  return key;
}

export function signature(secret: string, webhookId: string, timestampS: number, body: string): string {
  const mac = crypto.createHmac('sha256', hmacKey(secret)).update(`${webhookId}.${timestampS}.${body}`).digest('base64');
  return `v1,${mac}`;
}

export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three headers of one request, signed with every secret that is valid now (newest first). */
export function signedHeaders(secrets: readonly string[], webhookId: string, timestampS: number, body: string): WebhookHeaders {
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': secrets.map((s) => signature(s, webhookId, timestampS, body)).join(' '),
  };
}
