// The merchants' webhook receivers in a simulation: a Sender (src/domain/webhooks/sender.ts) that answers
// for them in process. Each receiver is up, failing (HTTP 500) or timing out, as the seed switches
// it, and records every webhook-id it was sent per event, so the invariants can ask whether each
// event reached each subscribed endpoint under one webhook-id.
import type { SendRequest, SendResult, Sender } from '../src/domain/webhooks/sender.js';

export type ReceiverMode = 'up' | 'failing' | 'timing_out';

export interface Receivers extends Sender {
  modes: Map<string, ReceiverMode>;
  /** Per receiver URL, per event id: the webhook-ids it was sent, and whether it acknowledged one. */
  seen: Map<string, Map<string, { ids: Set<string>; acknowledged: boolean }>>;
}

export function createReceivers(): Receivers {
  const modes = new Map<string, ReceiverMode>();
  const seen: Receivers['seen'] = new Map();
  return {
    modes,
    seen,
    async send(request: SendRequest): Promise<SendResult> {
      const mode = modes.get(request.url) ?? 'up';
      const eventId = (JSON.parse(request.body) as { id?: string }).id ?? '?';
      const byEvent = seen.get(request.url) ?? new Map();
      seen.set(request.url, byEvent);
      const entry = byEvent.get(eventId) ?? { ids: new Set<string>(), acknowledged: false };
      byEvent.set(eventId, entry);
      entry.ids.add(request.headers['webhook-id'] ?? '(none)');
      if (mode === 'timing_out') return { statusCode: null, retryAfterS: null, durationMs: request.timeoutMs, errorCode: 'timeout', errorMessage: 'simulated receiver timeout' };
      if (mode === 'failing') return { statusCode: 500, retryAfterS: null, durationMs: 1, errorCode: null, errorMessage: null };
      entry.acknowledged = true;
      return { statusCode: 200, retryAfterS: null, durationMs: 1, errorCode: null, errorMessage: null };
    },
    close() {},
  };
}
