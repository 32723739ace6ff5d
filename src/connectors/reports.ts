// Webhook readings that carry more than the movement kinds registered today apply (captures.ts):
// how they reach those kinds meanwhile.
import type { ChargeState, InboundEvent, InboundReport } from './types.js';

/**
 * The reading as the movement kinds registered today take it: a void's outcome settles our void
 * (src/domain/voids), a capture's names nothing of ours yet (acknowledged, not applied).
 */
export function movementEventOf(report: InboundReport): InboundEvent {
  if (report.object === 'capture') return { eventId: report.eventId, object: 'payment', reference: '', state: { kind: 'pending', connectorReference: '' } };
  return report;
}
