// Step 3 of webhook delivery (engine.ts): one signed HTTP request, outside any
// transaction. What happened is returned, not stored: step 4 records a batch at once.
import type { WebhookConfig } from '../../../config.js';
import type { Encryptor } from '../../../kernel/encryption.js';
import { newUuid } from '../../../kernel/ids.js';
import { eventView } from '../../../events/service.js';
import { isGuarded } from '../destinations.js';
import { signingSecrets } from '../service.js';
import type { ClaimedDelivery } from './queue.js';
import { signedHeaders } from '../signing.js';
import type { Sender, SendResult } from '../sender.js';

export interface AttemptDeps {
  config: WebhookConfig;
  encryptor: Encryptor;
  sender: Sender;
  now: () => Date;
}

// --- 3. send -------------------------------------------------------------------------------------

export type Completed =
  | { kind: 'cancel'; claimed: ClaimedDelivery }
  | {
      kind: 'attempt';
      claimed: ClaimedDelivery;
      /** Chosen once, so that recording again after an outage (the first try may have committed unheard) records it once. */
      attemptId: string;
      url: string;
      result: SendResult;
      startedAt: Date;
      finishedAt: Date;
    };

// Opening a sealed signing secret (AES-GCM, a cipher set up per call) cost more than the HMAC it
// feeds, and a backlog signs many requests with the same few endpoints' secrets: what was opened
// is kept, per encryptor, keyed by the sealed text and the row it belongs to (a rotated secret is
// another sealed text; a value that does not open throws and is not kept). Bounded: the cache is
// dropped whole when it fills.
const OPENED_CAP = 10_000;
const openers = new WeakMap<Encryptor, Encryptor>();

function remembering(encryptor: Encryptor): Encryptor {
  let opener = openers.get(encryptor);
  if (!opener) {
    const opened = new Map<string, string>();
    opener = {
      activeKeyId: encryptor.activeKeyId,
      encrypt: (plaintext, context) => encryptor.encrypt(plaintext, context),
      decrypt(sealed, context) {
        const key = `${context}\n${sealed}`;
        let plaintext = opened.get(key);
        if (plaintext === undefined) {
          plaintext = encryptor.decrypt(sealed, context);
          if (opened.size >= OPENED_CAP) opened.clear();
          opened.set(key, plaintext);
        }
        return plaintext;
      },
    };
    openers.set(encryptor, opener);
  }
  return opener;
}

export async function attemptDelivery(deps: AttemptDeps, claimed: ClaimedDelivery): Promise<Completed> {
  const { event, endpoint } = claimed;
  // A disabled or deleted endpoint receives nothing more; its pending deliveries end here.
  if (!event || !endpoint || !endpoint.enabled) return { kind: 'cancel', claimed };
  const startedAt = deps.now();
  let result: SendResult;
  try {
    const secrets = signingSecrets(remembering(deps.encryptor), { accountId: claimed.accountId, id: claimed.endpointId, ...endpoint }, startedAt);
    // The body is the event exactly as GET /v1/events/{id} returns it; its id is the webhook-id.
    const view = eventView(event);
    const body = JSON.stringify(view);
    result = await deps.sender.send({
      url: endpoint.url,
      headers: { ...signedHeaders(secrets, view.id, Math.floor(startedAt.getTime() / 1000), body) },
      body,
      timeoutMs: deps.config.timeoutMs,
      guarded: isGuarded(claimed.livemode, deps.config),
    });
  } catch (err) {
    // Our side failed (e.g. the secret's encryption key is not configured): nothing was sent.
    result = { statusCode: null, retryAfterS: null, durationMs: 0, errorCode: 'signing_failed', errorMessage: (err as Error).message };
  }
  return { kind: 'attempt', claimed, attemptId: newUuid(), url: endpoint.url, result, startedAt, finishedAt: deps.now() };
}
