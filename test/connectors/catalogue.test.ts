// Routing asks one source what a connector can do: its catalogue entry (src/connectors/catalogue.ts).
// This holds every connector this version implements without credentials (the built-ins) to what
// its entry promises, so the catalogue cannot claim a movement the implementation cannot send, nor
// the implementation offer one the catalogue hides from routing.
import { describe, expect, it } from 'vitest';
import { capabilitiesOf, catalogueEntry, implementedCapabilities } from '../../src/connectors/catalogue.js';
import { createConnectors } from '../../src/connectors/registry.js';
import { paymentsConfig } from '../../src/config/payments.js';
import type { Connector } from '../../src/connectors/types.js';

describe('connector capabilities', () => {
  const connectors = createConnectors(paymentsConfig({}));
  const builtIns = connectors.registry.names().map((name) => connectors.registry.get(name)!);

  it('every built-in has a catalogue entry whose movements its implementation sends', () => {
    expect(builtIns.length).toBeGreaterThan(0);
    for (const c of builtIns) {
      const entry = catalogueEntry(c.name);
      expect(entry, c.name).toBeDefined();
      const implemented = implementedCapabilities(c);
      const promised = entry!.capabilities;
      expect({ name: c.name, card: implemented.card_payments, payouts: implemented.payouts, mandates: implemented.mandate_schemes.length > 0, manualCapture: implemented.manual_capture }).toEqual({
        name: c.name,
        card: promised.card_payments,
        payouts: promised.payouts,
        mandates: promised.mandate_schemes.length > 0,
        manualCapture: promised.manual_capture,
      });
      // Several captures are promised only where the connector can capture at all.
      if (promised.multiple_captures) expect(promised.manual_capture, c.name).toBe(true);
    }
    connectors.close();
  });

  it('an account is routed by its entry less what its credentials leave off; an uncatalogued double by what it implements', () => {
    const adyen = catalogueEntry('adyen')!;
    const payoutFields = adyen.capabilityCredentials?.payouts ?? [];
    expect(payoutFields.length).toBeGreaterThan(0);
    expect(capabilitiesOf('adyen', undefined, [])?.payouts).toBe(false);
    expect(capabilitiesOf('adyen', undefined, [...payoutFields])?.payouts).toBe(true);
    const double = { name: 'double', paymentMethodTypes: ['card'], modes: ['test'] } as unknown as Connector;
    expect(capabilitiesOf('double', double)).toMatchObject({ card_payments: true, payouts: false, mandate_schemes: [] });
    expect(capabilitiesOf('double', undefined)).toBeUndefined();
  });
});
