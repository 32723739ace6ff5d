// The built-in family of simulated processors: two, so that routing and fallback can be seen.
import type { TestCardScenario } from './cards.js';

export interface ProcessorProfile {
  name: string;
  /** Card and account scenarios this processor answers with an internal error instead of processing. */
  errorsOn: readonly TestCardScenario[];
}

export const SIMULATED_PROCESSORS: readonly ProcessorProfile[] = [
  { name: 'simulator_a', errorsOn: ['processor_error'] },
  { name: 'simulator_b', errorsOn: [] },
];
