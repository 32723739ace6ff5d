// The simulated processors' webhook signature scheme (their own, Stripe-like): each processor has
// a secret derived from the family secret and its name, and signs "<unix seconds>.<body>".
import crypto from 'node:crypto';

export function processorSecret(familySecret: string, processor: string): string {
  return crypto.createHmac('sha256', familySecret).update(`webhook-secret:${processor}`).digest('hex');
}

export function signPayload(secret: string, timestampS: number, body: string): string {
  const mac = crypto.createHmac('sha256', secret).update(`${timestampS}.${body}`).digest('hex');
  return `t=${timestampS},v1=${mac}`;
}

export type SignatureCheck = 'ok' | 'invalid' | 'stale';

export function verifySignature(secret: string, header: string | undefined, body: string, nowS: number, toleranceS: number): SignatureCheck {
  if (!header) return 'invalid';
  const parts = new Map<string, string[]>();
  for (const item of header.split(',')) {
    const eq = item.indexOf('=');
    if (eq <= 0) continue;
    const key = item.slice(0, eq).trim();
    parts.set(key, [...(parts.get(key) ?? []), item.slice(eq + 1).trim()]);
  }
  const t = parts.get('t')?.[0];
  const signatures = parts.get('v1') ?? [];
  if (!t || !/^\d{1,12}$/.test(t) || signatures.length === 0) return 'invalid';
  const expected = Buffer.from(crypto.createHmac('sha256', secret).update(`${t}.${body}`).digest('hex'));
  const matches = signatures.some((s) => {
    const given = Buffer.from(s);
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
  if (!matches) return 'invalid';
  // Checked after the signature, so that a forged request learns nothing about the clock.
  return Math.abs(nowS - Number(t)) > toleranceS ? 'stale' : 'ok';
}
