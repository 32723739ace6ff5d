// Every processor the connector contract suite runs over, and the real sandboxes
// `npm run connectors:smoke -- <name>` can run against. A new connector adds its harness file
// (harness.ts says what it offers) and one line to each table.
import type { ProcessorHarness, Sandbox } from './harness.js';
import { simulatorHarness } from './simulator.js';
import { stripeHarness, stripeSandbox } from './stripe.js';

export const HARNESSES: readonly (() => ProcessorHarness)[] = [simulatorHarness, stripeHarness];

/** By the name given to the smoke command; undefined: this version has no connector for it yet. */
export const SANDBOXES: Readonly<Record<string, Sandbox | undefined>> = {
  stripe: stripeSandbox,
  adyen: undefined,
};
