// A circuit breaker per key (a connector, the read replica), in process: after `failureThreshold`
// consecutive failures the key is skipped for `openMs`; then one probe request is let through (half-open), and its
// outcome closes the circuit again or re-opens it for another `openMs`. The clock is injected.
//
// Process-local on purpose: it is an optimisation (do not wait on a processor that is down), not
// a correctness mechanism, and every process learns a processor's health within a few requests.

export type CircuitState = 'closed' | 'open' | 'half_open';

export interface CircuitBreakerOptions {
  failureThreshold: number;
  openMs: number;
  now?: () => number;
}

interface Circuit {
  consecutiveFailures: number;
  /** While open: when a probe may be let through. */
  openUntilMs: number;
  state: CircuitState;
  /** Half-open: when the probe in flight was let through (another may go if it never reports back). */
  probeStartedAtMs: number | undefined;
}

export class CircuitBreaker {
  private readonly circuits = new Map<string, Circuit>();
  private readonly now: () => number;

  constructor(private readonly options: CircuitBreakerOptions) {
    this.now = options.now ?? Date.now;
  }

  private circuit(name: string): Circuit {
    let c = this.circuits.get(name);
    if (!c) {
      c = { consecutiveFailures: 0, openUntilMs: 0, state: 'closed', probeStartedAtMs: undefined };
      this.circuits.set(name, c);
    }
    return c;
  }

  state(name: string): CircuitState {
    const c = this.circuit(name);
    if (c.state === 'open' && this.now() >= c.openUntilMs) return 'half_open';
    return c.state;
  }

  /** Whether a request could go to the connector now, without claiming the probe. */
  isAvailable(name: string): boolean {
    const c = this.circuit(name);
    const now = this.now();
    if (c.state === 'closed') return true;
    if (c.state === 'open') return now >= c.openUntilMs;
    return c.probeStartedAtMs === undefined || now - c.probeStartedAtMs >= this.options.openMs;
  }

  /** Asks to send one request; when half-open, only the first asker (the probe) is allowed. */
  tryAcquire(name: string): boolean {
    const c = this.circuit(name);
    const now = this.now();
    if (c.state === 'closed') return true;
    if (c.state === 'open') {
      if (now < c.openUntilMs) return false;
      c.state = 'half_open';
      c.probeStartedAtMs = undefined;
    }
    if (c.probeStartedAtMs !== undefined && now - c.probeStartedAtMs < this.options.openMs) return false;
    c.probeStartedAtMs = now;
    return true;
  }

  onSuccess(name: string): void {
    const c = this.circuit(name);
    c.state = 'closed';
    c.consecutiveFailures = 0;
    c.probeStartedAtMs = undefined;
  }

  onFailure(name: string): void {
    const c = this.circuit(name);
    c.consecutiveFailures += 1;
    if (c.state === 'half_open' || c.consecutiveFailures >= this.options.failureThreshold) {
      c.state = 'open';
      c.openUntilMs = this.now() + this.options.openMs;
      c.probeStartedAtMs = undefined;
    }
  }
}
