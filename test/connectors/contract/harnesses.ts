// Every processor the connector contract suite runs over. A new connector adds its harness file
// (harness.ts says what it offers) and one line here, and one in sandboxes.ts for its smoke run.
import { adyenHarness } from './adyen.js';
import { gocardlessHarness } from './gocardless.js';
import type { ProcessorHarness } from './harness.js';
import { simulatorHarness } from './simulator.js';
import { stripeHarness } from './stripe.js';

export const HARNESSES: readonly (() => ProcessorHarness)[] = [simulatorHarness, stripeHarness, adyenHarness, gocardlessHarness];
