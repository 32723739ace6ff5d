// The built-in family of simulated processors: two, so that routing and fallback can be seen.
import type { TestCardScenario } from './cards.js';

export interface ProcessorProfile {
  name: string;
  /** Card and account scenarios this processor answers with an internal error instead of processing. */
  errorsOn: readonly TestCardScenario[];
  /** What it charges for a payment, in its settlement report (default SIMULATOR_FEE: both built-ins). */
  fee?: FeeSchedule;
}

/** A processor's price for a payment: a share of the amount in basis points (rounded half up) plus a fixed part, in minor units. */
export interface FeeSchedule {
  bps: number;
  fixedMinor: number;
}

/** What the built-in simulators charge for a payment: 1.5 % plus 10 minor units; nothing else costs a fee. */
export const SIMULATOR_FEE: FeeSchedule = { bps: 150, fixedMinor: 10 };

export const SIMULATED_PROCESSORS: readonly ProcessorProfile[] = [
  { name: 'simulator_a', errorsOn: ['processor_error'] },
  { name: 'simulator_b', errorsOn: [] },
];
