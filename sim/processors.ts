// The outside world of the service in a simulation: the simulated processors and banks (the
// repo's own simulator, its books in the same database, as in process), reached through a
// transport that plays the faults the seed chose (refused, 500, answered-then-timed-out), and the
// processors' webhooks to the service, sent when the simulation says so: late, twice, or in
// another order. The world survives a crash of the service; only the service is rebuilt.
import { createSimulatorConnector, inProcessTransport, type SimulatorTransport } from '../src/connectors/simulator/connector.js';
import { SIMULATED_PROCESSORS, SimulatorHost, type ProcessorProfile, type SimulatorClock } from '../src/connectors/simulator/processor.js';
import { processorSecret, signPayload } from '../src/connectors/simulator/signing.js';
import { SIM_SIGNATURE_HEADER, type SimChargeRequest } from '../src/connectors/simulator/protocol.js';
import { sqlStore } from '../src/connectors/simulator/sql-store.js';
import { TransportError, type Connector } from '../src/connectors/types.js';
import type { Db } from '../src/storage/db.js';
import type { Rng } from './rng.js';
import type { SimClock } from './clock.js';

export type ProcessorFault = 'none' | 'refused' | 'error_500' | 'answer_lost';

export interface Injected {
  status: number;
  text: string;
}

export interface ProcessorWorld {
  connectors: Connector[];
  /** The processors' own due work, then their webhooks to the service (with the seed's faults). */
  pump(send: (path: string, headers: Record<string, string>, body: string) => Promise<number>): Promise<void>;
  /** Charge requests that reached a processor for a reference some processor had already answered as held. */
  recharges: string[];
  /** References a processor answered as charged (or left pending) and whose answer reached the service. */
  held: Map<string, string>;
  faultRate: number;
  /** Faults to play on the next calls, before any the fault rate draws (regression cases). */
  nextFaults: ProcessorFault[];
  names: string[];
  close(): void;
}

/**
 * How the processors treat a charge request, beyond what its test card says (the backtest's
 * traffic model, sim/backtest/model.ts): how long the call takes on the simulated clock, and either
 * a fault (as the seed's faults are played) or the test card that makes the simulator answer as
 * the card's issuer does through this processor. Consulted before the fault rate, on charge creates only.
 */
export interface ProcessorBehaviour {
  charge(processor: string, body: SimChargeRequest): { latencyMs: number; fault?: Exclude<ProcessorFault, 'none'>; pan?: string };
}

export interface WorldOptions {
  /** The processors' profiles (names as the built-ins', so the catalogue knows them), e.g. with their own fees. */
  profiles?: readonly ProcessorProfile[];
  behaviour?: ProcessorBehaviour;
}

const HELD = ['CAPTURED', 'PENDING', 'AWAITING_AUTHENTICATION'];
const NEVER: SimulatorClock['schedule'] = () => () => undefined;

export function createProcessorWorld(db: Db, clock: SimClock, rng: Rng, familySecret: string, pendingDelayMs: number, options: WorldOptions = {}): ProcessorWorld {
  const profiles = options.profiles ?? SIMULATED_PROCESSORS;
  const simClock: SimulatorClock = { now: clock.now, schedule: NEVER };
  // Ids fixed per run (instanceId), and no timers of its own: the simulation pumps it.
  const host = new SimulatorHost({ familySecret, pendingDelayMs, clock: simClock, store: sqlStore(db), instanceId: 'sim0', profiles });
  const direct = inProcessTransport(host);
  const names = profiles.map((p) => p.name);
  const world: ProcessorWorld = {
    connectors: [],
    recharges: [],
    held: new Map(),
    faultRate: 0,
    nextFaults: [],
    names,
    pump: async (send) => {
      const now = clock.now();
      for (const key of await host.store.due(names, now, 100)) await host.processors.get(key.processor)!.runDue(key).catch(() => undefined);
      const reports = await host.store.claimReports(names, now, new Date(now.getTime() + 15_000), 100);
      // Out of order: the processors' webhooks leave in an order the seed picks.
      const order = reports.map((r) => ({ r, k: rng.float() })).sort((x, y) => x.k - y.k).map((x) => x.r);
      for (const report of order) {
        const roll = rng.float();
        if (roll < world.faultRate) {
          // Late: not sent now; the processor tries again after its retry delay.
          await host.store.retryReport(report.eventId, new Date(clock.nowMs() + rng.between(1, 30) * 1000));
          continue;
        }
        const body = JSON.stringify(report.body);
        const headers = { 'content-type': 'application/json', [SIM_SIGNATURE_HEADER]: signPayload(processorSecret(familySecret, report.processor), Math.floor(clock.nowMs() / 1000), body) };
        const path = `/v1/connectors/${report.processor}/webhooks`;
        const status = await send(path, headers, body);
        // Duplicate: the same webhook again, as processors do.
        if (rng.float() < world.faultRate) await send(path, headers, body);
        const done = (status >= 200 && status < 300) || (status >= 400 && status < 500 && status !== 409 && status !== 429);
        if (done || report.attempts >= 5) await host.store.dropReport(report.eventId);
        else await host.store.retryReport(report.eventId, new Date(clock.nowMs() + 1000 * report.attempts));
      }
    },
    close: () => host.close(),
  };
  const transport: SimulatorTransport = {
    async send(method, path, body, signal) {
      const [processor, collection, reference, action] = path.split('?')[0]!.split('/').filter(Boolean);
      const isChargeCreate = method === 'POST' && collection === 'charges' && reference === undefined && action === undefined;
      const behaved = isChargeCreate ? options.behaviour?.charge(processor!, body as SimChargeRequest) : undefined;
      if (behaved) {
        clock.advance(behaved.latencyMs);
        if (behaved.pan) body = { ...(body as SimChargeRequest), card: { ...(body as SimChargeRequest).card!, pan: behaved.pan } };
      }
      const fault: ProcessorFault = behaved?.fault ?? world.nextFaults.shift() ?? (rng.float() < world.faultRate ? rng.pick(['refused', 'error_500', 'answer_lost'] as const) : 'none');
      if (fault === 'refused') throw new TransportError('connection_refused', 'simulated: connection refused');
      if (fault === 'error_500') return { status: 500, body: { error: { code: 'INTERNAL_ERROR', message: 'simulated processor error' } } };
      const ref = isChargeCreate ? (body as { merchant_reference?: string } | undefined)?.merchant_reference : undefined;
      if (ref !== undefined && world.held.has(ref)) world.recharges.push(`${ref} at ${processor} (held at ${world.held.get(ref)})`);
      const answer = await direct.send(method, path, body, signal);
      if (fault === 'answer_lost') throw new TransportError('timeout', 'simulated: the processor acted but its answer was lost');
      const state = (answer.body as { state?: string } | undefined)?.state;
      if (ref !== undefined && answer.status < 300 && HELD.includes(state ?? '')) world.held.set(ref, processor!);
      return answer;
    },
  };
  world.connectors = profiles.map((profile) =>
    createSimulatorConnector({ name: profile.name, transport, familySecret, pageBaseUrl: () => 'http://service.sim' }),
  );
  return world;
}
