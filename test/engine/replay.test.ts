// Locating a movement after a crash when a connector cannot be asked (Adyen has no status call)
// but replays sends under the same key: the movement is sent again there alone, and only when no
// other connector could hold it, within the processor's key window; any doubt leaves it waiting.
import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../src/kernel/circuit-breaker.js';
import type { CallDeps } from '../../src/connectors/router.js';
import { connectorError, type ChargeState, type Connector, type ConnectorError } from '../../src/connectors/types.js';
import { locate, replaySend } from '../../src/movement/calls.js';
import type { AnyKind } from '../../src/movement/kind.js';
import type { MovementRow } from '../../src/movement/row.js';
import type { Executor } from '../../src/storage/db.js';

type Status = ChargeState | { kind: 'not_found' } | ConnectorError;
const NOW = new Date('2026-11-24T12:00:00Z');
const DAY = 24 * 3600 * 1000;

/** A connector that answers status questions with `status` and sends with `send`, counting sends. */
function connector(name: string, status: Status, send: ChargeState | ConnectorError, replaysSendsForMs?: number) {
  const sent: unknown[] = [];
  const c = {
    name,
    replaysSendsForMs,
    chargeStatus: async () => status,
    charge: async (request: unknown) => (sent.push(request), send),
  } as unknown as Connector;
  return { c, sent };
}

function deps(...connectors: Connector[]): CallDeps {
  const byName = new Map(connectors.map((c) => [c.name, c]));
  return {
    registry: { get: (n) => byName.get(n), names: () => [...byName.keys()] },
    breaker: new CircuitBreaker({ failureThreshold: 100, openMs: 1000, now: () => NOW.getTime() }),
    timeoutMs: 1000,
    now: () => NOW,
  };
}

const kind = {
  object: 'payment',
  prefix: 'pay',
  send: (c: Connector, r: never, s: AbortSignal) => c.charge(r, s),
  status: (c: Connector, r: never, s: AbortSignal) => c.chargeStatus(r, s),
  attempt: (s: { kind: string }) => ({ outcome: s.kind, errorCode: null }),
} as unknown as AnyKind;

const row = (ageMs: number): MovementRow => ({
  accountId: 'acct',
  id: '0193a1b2-0000-7000-8000-000000000001',
  livemode: true,
  status: 'pending',
  connector: null,
  connectorReference: null,
  createdAt: new Date(NOW.getTime() - ageMs),
});

// The kind here reads no other rows before a status question.
const NO_DB = {} as Executor;
const cannotTell = connectorError('invalid_response', 'no status lookup');
const taken: ChargeState = { kind: 'succeeded', connectorReference: 'psp_1' };

describe('locate with a connector that replays sends', () => {
  it('names it for a replay when every other connector holds nothing', async () => {
    const adyen = connector('adyen', cannotTell, taken, 7 * DAY);
    const sim = connector('sim', { kind: 'not_found' }, taken);
    expect(await locate(deps(sim.c, adyen.c), kind, row(60_000), ['sim', 'adyen'], NO_DB)).toEqual({ found: false, certain: true, replay: 'adyen' });
  });

  it('adopts where another connector holds it: nothing is sent again', async () => {
    const adyen = connector('adyen', cannotTell, taken, 7 * DAY);
    const sim = connector('sim', { kind: 'succeeded', connectorReference: 'sim_1' }, taken);
    const located = await locate(deps(adyen.c, sim.c), kind, row(60_000), ['adyen', 'sim'], NO_DB);
    expect(located).toMatchObject({ found: true, connector: 'sim' });
  });

  it('is uncertain with two silent connectors, with one that does not replay, or past the key window', async () => {
    const a = connector('a', cannotTell, taken, 7 * DAY);
    const b = connector('b', cannotTell, taken, 7 * DAY);
    expect(await locate(deps(a.c, b.c), kind, row(60_000), ['a', 'b'], NO_DB)).toEqual({ found: false, certain: false });
    const silent = connector('silent', cannotTell, taken);
    expect(await locate(deps(silent.c), kind, row(60_000), ['silent'], NO_DB)).toEqual({ found: false, certain: false });
    expect(await locate(deps(a.c), kind, row(8 * DAY), ['a'], NO_DB)).toEqual({ found: false, certain: false });
  });
});

describe('replaySend', () => {
  it("sends to that connector alone and takes its answer, first or replayed", async () => {
    const adyen = connector('adyen', cannotTell, taken, 7 * DAY);
    const other = connector('other', { kind: 'not_found' }, taken);
    const execution = await replaySend(deps(adyen.c, other.c), kind, 'adyen', { reference: 'pay_1' });
    expect(execution).toMatchObject({ connector: 'adyen', result: taken });
    expect(adyen.sent).toEqual([{ reference: 'pay_1' }]);
    expect(other.sent).toEqual([]);
  });

  it('tells nothing when the connector refuses now: a 429 or a refused connection says nothing of the first send', async () => {
    for (const code of ['processor_error', 'connection_refused'] as const) {
      const adyen = connector('adyen', cannotTell, connectorError(code, 'not now'), 7 * DAY);
      expect(await replaySend(deps(adyen.c), kind, 'adyen', {})).toBeUndefined();
    }
  });
});
