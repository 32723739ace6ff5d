// The simulated clock, installed in one place: the global Date. Every reader of time in the
// service (`new Date()`, `Date.now()`, the runtime's `now`) and the embedded database's `now()`
// (PGlite's WASM build reads the JavaScript clock) see the same simulated instant, which moves
// only when the simulation moves it. Timers (setTimeout) stay real: the service sets them only for
// network deadlines, which the in-process simulator never reaches.
export const SIM_EPOCH_MS = Date.UTC(2030, 0, 1);

export interface SimClock {
  nowMs(): number;
  now(): Date;
  advance(ms: number): void;
  /** Puts the real Date back (end of a run). */
  uninstall(): void;
}

const RealDate = Date;

export function installClock(startMs = SIM_EPOCH_MS): SimClock {
  let current = startMs;
  class SimDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(current);
      else super(...(args as [string | number]));
    }
    static override now() {
      return current;
    }
    // Dates made before the clock was installed (or by code holding the real constructor) are dates too.
    static override [Symbol.hasInstance](value: unknown) {
      return value instanceof RealDate;
    }
  }
  globalThis.Date = SimDate as unknown as DateConstructor;
  return {
    nowMs: () => current,
    now: () => new RealDate(current),
    advance(ms) {
      current += Math.max(0, Math.round(ms));
    },
    uninstall() {
      globalThis.Date = RealDate;
    },
  };
}
