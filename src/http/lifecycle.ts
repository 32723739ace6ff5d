// The listener's part of a graceful shutdown (src/service.ts runs the steps). While draining,
// /ready answers 503 so that load balancers stop sending, yet requests are still served; once
// closing, the listener takes no new connection, a request arriving on a connection already open
// gets a typed 503 (never a half-done answer), and the requests in flight finish, up to the grace
// period. Every answer from draining on says `Connection: close`, so clients reconnect elsewhere
// and no idle keep-alive connection holds the listener open.
import type { FastifyBaseLogger } from 'fastify';
import { ApiError } from '../kernel/errors.js';
import type { App } from './types.js';
import { settlesBy } from '../kernel/deadline.js';

export interface Lifecycle {
  state: 'serving' | 'draining' | 'closing';
  /** Requests received and not yet answered (or abandoned by their client). */
  inFlight: number;
}

export function createLifecycle(): Lifecycle {
  return { state: 'serving', inFlight: 0 };
}

/** Counts requests in flight and refuses new ones once closing. Registered before every other hook. */
export function registerLifecycle(app: App, lifecycle: Lifecycle): void {
  // Callback hooks, not async ones: every request passes both, and a promise each is measurable.
  app.addHook('onRequest', (_req, reply, done) => {
    lifecycle.inFlight++;
    reply.raw.once('close', () => lifecycle.inFlight--);
    if (lifecycle.state !== 'closing') return done();
    done(
      new ApiError('service_unavailable', {
        message: 'This instance is shutting down; retry, another instance will answer.',
        headers: { 'retry-after': '1' },
      }),
    );
  });
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (lifecycle.state !== 'serving') reply.header('connection', 'close');
    done(null, payload);
  });
}

/**
 * Stops taking connections and waits for the requests in flight until `deadlineMs` (epoch ms);
 * those still running then are cut (their clients see the connection close, and their
 * Idempotency-Keys let a retry resume them, as after a crash).
 */
export async function closeListener(app: App, lifecycle: Lifecycle, deadlineMs: number, log: FastifyBaseLogger): Promise<void> {
  lifecycle.state = 'closing';
  log.info({ in_flight: lifecycle.inFlight }, 'shutdown: listener closed to new connections; waiting for the requests in flight');
  const closed = app.close();
  if (!(await settlesBy(closed, deadlineMs))) {
    log.warn({ in_flight: lifecycle.inFlight }, 'shutdown: grace period over; cutting the requests still in flight');
    app.server.closeAllConnections();
    await closed;
  }
  log.info('shutdown: HTTP requests finished');
}
