// Known defects that the whole-service simulation (sim/) plants to prove that its invariants
// catch them. Test-only: nothing but `npm run simulate -- --plant` and its tests switches one on,
// and every switch is off unless it does.
export const PLANTS = ['payout-skips-balance-lock', 'refund-skips-sum-check', 'event-outside-transaction', 'resume-recharges'] as const;
export type Plant = (typeof PLANTS)[number];

const active = new Set<Plant>();

export function plant(defect: Plant | undefined): void {
  active.clear();
  if (defect) active.add(defect);
}

export function planted(defect: Plant): boolean {
  return active.size > 0 && active.has(defect);
}
