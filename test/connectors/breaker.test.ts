// The circuit breaker: unit behaviour on an injected clock, then through the service — a connector
// that keeps failing is skipped (the skip is recorded as an attempt), probed again after the open
// period, closed by a successful probe and re-opened by a failed one.
import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../src/kernel/circuit-breaker.js';
import { CARDS, orderAndPay } from '../support/payments.js';
import { useService } from '../support/fixtures.js';

describe('CircuitBreaker (unit)', () => {
  it('opens after the threshold of consecutive failures, lets one probe through after the open period', () => {
    let now = 1_000;
    const breaker = new CircuitBreaker({ failureThreshold: 3, openMs: 500, now: () => now });
    breaker.onFailure('x');
    breaker.onFailure('x');
    breaker.onSuccess('x'); // a success resets the count
    breaker.onFailure('x');
    breaker.onFailure('x');
    expect(breaker.state('x')).toBe('closed');
    breaker.onFailure('x');
    expect(breaker.state('x')).toBe('open');
    expect(breaker.isAvailable('x')).toBe(false);
    expect(breaker.tryAcquire('x')).toBe(false);
    expect(breaker.state('y')).toBe('closed'); // per connector

    now += 500;
    expect(breaker.state('x')).toBe('half_open');
    expect(breaker.isAvailable('x')).toBe(true);
    expect(breaker.tryAcquire('x')).toBe(true); // the probe
    expect(breaker.tryAcquire('x')).toBe(false); // only one at a time
    breaker.onFailure('x'); // a failed probe re-opens at once
    expect(breaker.state('x')).toBe('open');
    now += 499;
    expect(breaker.tryAcquire('x')).toBe(false);
    now += 1;
    expect(breaker.tryAcquire('x')).toBe(true);
    breaker.onSuccess('x');
    expect(breaker.state('x')).toBe('closed');
    expect(breaker.tryAcquire('x')).toBe(true);
    expect(breaker.tryAcquire('x')).toBe(true);
  });

  it('lets another probe through when the first never reports back', () => {
    let now = 0;
    const breaker = new CircuitBreaker({ failureThreshold: 1, openMs: 100, now: () => now });
    breaker.onFailure('x');
    now = 100;
    expect(breaker.tryAcquire('x')).toBe(true);
    now = 150;
    expect(breaker.tryAcquire('x')).toBe(false);
    now = 200;
    expect(breaker.tryAcquire('x')).toBe(true);
  });
});

describe('circuit breaker through the service', () => {
  let clockMs = Date.now();
  const h = useService({ settings: { circuitBreaker: { failureThreshold: 2, openMs: 60_000 } }, runtime: { nowMs: () => clockMs } });
  const { api } = h;

  const route = (p: any) => p.attempts.map((a: any) => `${a.connector}:${a.outcome}${a.error_code ? `:${a.error_code}` : ''}`);
  const circuits = async () => Object.fromEntries((await api.get('/v1/routing')).body.connectors.map((c: any) => [c.name, c.circuit]));

  it('skips a failing connector, probes it after the open period, and closes or re-opens on the probe', async () => {
    // Two processor errors at simulator_a (each falls back to simulator_b) open its circuit.
    for (let i = 0; i < 2; i++) {
      expect(route((await orderAndPay(api, CARDS.processorError)).payment)).toEqual(['simulator_a:error:processor_error', 'simulator_b:succeeded']);
    }
    expect(await circuits()).toEqual({ simulator_a: 'open', simulator_b: 'closed' });

    // While open, simulator_a is skipped, even for a card it would take; the skip is recorded.
    const skipped = (await orderAndPay(api, CARDS.success)).payment;
    expect(skipped.connector).toBe('simulator_b');
    expect(route(skipped)).toEqual(['simulator_a:skipped:circuit_open', 'simulator_b:succeeded']);
    expect(skipped.attempts[0].duration_ms).toBe(0);
    expect(h.service.simulator().chargeRequests.has(skipped.id)).toBe(false);

    // After the open period one probe goes to simulator_a; it fails, so the circuit re-opens.
    clockMs += 60_000;
    expect(await circuits()).toMatchObject({ simulator_a: 'half_open' });
    expect(route((await orderAndPay(api, CARDS.processorError)).payment)).toEqual(['simulator_a:error:processor_error', 'simulator_b:succeeded']);
    expect(await circuits()).toMatchObject({ simulator_a: 'open' });
    expect(route((await orderAndPay(api, CARDS.success)).payment)).toEqual(['simulator_a:skipped:circuit_open', 'simulator_b:succeeded']);

    // The next probe succeeds: closed again, and simulator_a takes payments as before.
    clockMs += 60_000;
    expect(route((await orderAndPay(api, CARDS.success)).payment)).toEqual(['simulator_a:succeeded']);
    expect(await circuits()).toEqual({ simulator_a: 'closed', simulator_b: 'closed' });
    expect(route((await orderAndPay(api, CARDS.success)).payment)).toEqual(['simulator_a:succeeded']);
  });

  it('a decline is no failure of the connector', async () => {
    for (let i = 0; i < 4; i++) expect((await orderAndPay(api, CARDS.declined)).payment.status).toBe('failed');
    expect(await circuits()).toEqual({ simulator_a: 'closed', simulator_b: 'closed' });
  });
});
