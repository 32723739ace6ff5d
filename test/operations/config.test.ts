// Start-up checks of settings that are each valid alone but unsafe together, and defaults that
// depend on the deployment.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { SIMULATED_PROCESSORS } from '../../src/connectors/simulator/processor.js';

/** The secrets a production start cannot do without (the vault's keys and the fingerprint key). */
const PRODUCTION = {
  NODE_ENV: 'production',
  VAULT_KEYS: `v1:${Buffer.alloc(32, 7).toString('base64')}`,
  CARD_FINGERPRINT_KEY: Buffer.alloc(32, 9).toString('base64'),
};

describe('the idempotency lock against the longest route', () => {
  it('refuses a lock a stalled request could still be calling connectors after', () => {
    // The reviewer's example: two connectors of 40 s each outlast the default 60 s lock.
    expect(() => loadConfig({ CONNECTOR_TIMEOUT_MS: '40000' })).toThrow(ConfigError);
    expect(() => loadConfig({ CONNECTOR_TIMEOUT_MS: '40000' })).toThrow(/IDEMPOTENCY_LOCK_TIMEOUT_S \(60\).*CONNECTOR_TIMEOUT_MS/);
    const routeMs = SIMULATED_PROCESSORS.length * 10_000;
    // Merely longer than the route is not enough: the margin covers phase 1 and process pauses.
    expect(() => loadConfig({ IDEMPOTENCY_LOCK_TIMEOUT_S: String(routeMs / 1000 + 1) })).toThrow(/IDEMPOTENCY_LOCK_TIMEOUT_S/);
    expect(() => loadConfig({ IDEMPOTENCY_LOCK_TIMEOUT_S: String((2 * routeMs) / 1000) })).toThrow(/IDEMPOTENCY_LOCK_TIMEOUT_S/);
  });

  it('accepts the defaults and a lock comfortably above the route', () => {
    expect(loadConfig({})).toMatchObject({ idempotencyLockTimeoutS: 60, payments: { connectorTimeoutMs: 10_000 } });
    expect(loadConfig({ CONNECTOR_TIMEOUT_MS: '40000', IDEMPOTENCY_LOCK_TIMEOUT_S: '200' }).idempotencyLockTimeoutS).toBe(200);
    expect(loadConfig({ CONNECTOR_TIMEOUT_MS: '700', IDEMPOTENCY_LOCK_TIMEOUT_S: '3' }).payments.connectorTimeoutMs).toBe(700);
  });
});

describe('test-mode webhooks to private destinations', () => {
  it('are denied by default in production, allowed by default elsewhere', () => {
    expect(loadConfig(PRODUCTION).webhooks.testModePrivateDestinations).toBe('deny');
    expect(loadConfig({}).webhooks.testModePrivateDestinations).toBe('allow');
    expect(loadConfig({ NODE_ENV: 'development' }).webhooks.testModePrivateDestinations).toBe('allow');
    expect(loadConfig({ NODE_ENV: 'test' }).webhooks.testModePrivateDestinations).toBe('allow');
  });

  it('follow an explicit setting whatever NODE_ENV says', () => {
    expect(loadConfig({ ...PRODUCTION, WEBHOOK_TEST_MODE_PRIVATE_DESTINATIONS: 'allow' }).webhooks.testModePrivateDestinations).toBe('allow');
    expect(loadConfig({ WEBHOOK_TEST_MODE_PRIVATE_DESTINATIONS: 'deny' }).webhooks.testModePrivateDestinations).toBe('deny');
    expect(() => loadConfig({ ...PRODUCTION, WEBHOOK_TEST_MODE_PRIVATE_DESTINATIONS: 'maybe' })).toThrow(/allow or deny/);
  });
});

describe('the card vault\'s keys and the card fingerprint key', () => {
  it('refuse a production start without them, naming the setting', () => {
    const { VAULT_KEYS, CARD_FINGERPRINT_KEY, ...bare } = PRODUCTION;
    expect(() => loadConfig({ ...bare, CARD_FINGERPRINT_KEY })).toThrow(ConfigError);
    expect(() => loadConfig({ ...bare, CARD_FINGERPRINT_KEY })).toThrow(/^VAULT_KEYS must be set when NODE_ENV=production/);
    expect(() => loadConfig({ ...bare, VAULT_KEYS, CARD_FINGERPRINT_KEY: '' })).toThrow(/^CARD_FINGERPRINT_KEY must be set when NODE_ENV=production/);
    expect(() => loadConfig({ ...bare, VAULT_KEYS })).toThrow(ConfigError);
    const config = loadConfig(PRODUCTION);
    expect(config.vaultKeys.map((k) => k.id)).toEqual(['v1']);
    expect(config.usingDevelopmentVaultKey).toBe(false);
    expect(config.payments.usingDevelopmentFingerprintKey).toBe(false);
  });

  it('take the public development keys on any other start, the vault\'s distinct from ENCRYPTION_KEYS\'s', () => {
    for (const env of [{}, { NODE_ENV: 'development' }, { NODE_ENV: 'test', DATABASE_URL: 'postgres://db/x' }]) {
      const config = loadConfig(env);
      expect(config.usingDevelopmentVaultKey).toBe(true);
      expect(config.vaultKeys.map((k) => k.id)).toEqual(['dev-vault']);
      expect(config.vaultKeys[0]!.key.equals(config.encryptionKeys[0]!.key)).toBe(false);
      expect(config.payments.usingDevelopmentFingerprintKey).toBe(true);
    }
  });

  it('parse VAULT_KEYS as ENCRYPTION_KEYS is parsed: the first wraps, every one unwraps', () => {
    const a = Buffer.alloc(32, 1).toString('base64');
    const b = Buffer.alloc(32, 2).toString('base64');
    expect(loadConfig({ VAULT_KEYS: `new:${a}, old:${b}` }).vaultKeys.map((k) => k.id)).toEqual(['new', 'old']);
    expect(() => loadConfig({ VAULT_KEYS: 'nocolon' })).toThrow(/^VAULT_KEYS: each key must look like <id>:<base64 of 32 bytes>/);
    expect(() => loadConfig({ VAULT_KEYS: `k:${Buffer.alloc(16).toString('base64')}` })).toThrow(/^VAULT_KEYS: key k must be 32 bytes/);
    expect(() => loadConfig({ VAULT_KEYS: `k:${a},k:${b}` })).toThrow(/^VAULT_KEYS: key ids must be unique/);
    expect(() => loadConfig({ ENCRYPTION_KEYS: 'nocolon' })).toThrow(/^ENCRYPTION_KEYS: each key/);
  });
});

describe('PUBLIC_BASE_URL', () => {
  it('is an http(s) base without its trailing slash; unset, the service uses the address it listens on', () => {
    expect(loadConfig({}).publicBaseUrl).toBeUndefined();
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://pay.example.com/' }).publicBaseUrl).toBe('https://pay.example.com');
    expect(loadConfig({ PUBLIC_BASE_URL: 'http://10.0.0.5:8080/api/' }).publicBaseUrl).toBe('http://10.0.0.5:8080/api');
  });

  it.each(['pay.example.com', 'ftp://pay.example.com', 'https://pay.example.com/?x=1', 'https://pay.example.com/#top', 'https://user:pw@pay.example.com'])(
    'refuses %s',
    (raw) => {
      expect(() => loadConfig({ PUBLIC_BASE_URL: raw })).toThrow(/PUBLIC_BASE_URL/);
    },
  );
});

describe.each([
  ['STRIPE_API_BASE_URL', 'stripeApiBaseUrl'],
  ['ADYEN_CHECKOUT_BASE_URL', 'adyenCheckoutBaseUrl'],
  ['GOCARDLESS_API_BASE_URL', 'gocardlessApiBaseUrl'],
  ['ADYEN_PAYOUT_BASE_URL', 'adyenPayoutBaseUrl'],
  ['ADYEN_DISPUTE_BASE_URL', 'adyenDisputeBaseUrl'],
] as const)('%s', (name, field) => {
  it("is an http(s) origin; unset, the processor's own endpoint", () => {
    expect(loadConfig({}).payments[field]).toBeUndefined();
    expect(loadConfig({ [name]: 'http://127.0.0.1:12111/' }).payments[field]).toBe('http://127.0.0.1:12111');
  });

  it.each(['127.0.0.1:12111', 'ftp://processor.test', 'https://processor.test/v1', 'https://processor.test/?x=1', 'https://user:pw@processor.test'])('refuses %s', (raw) => {
    expect(() => loadConfig({ [name]: raw })).toThrow(new RegExp(name));
  });
});

describe('shutdown, database and request body timing', () => {
  it('has defaults, and refuses a delay that would use up the grace period', () => {
    expect(loadConfig({})).toMatchObject({ shutdownDelayMs: 0, shutdownGraceMs: 25_000, databaseConnectTimeoutMs: 5000 });
    expect(loadConfig({ SHUTDOWN_DELAY_MS: '5000', SHUTDOWN_GRACE_MS: '30000' })).toMatchObject({ shutdownDelayMs: 5000, shutdownGraceMs: 30_000 });
    expect(() => loadConfig({ SHUTDOWN_DELAY_MS: '30000' })).toThrow(/SHUTDOWN_DELAY_MS \(30000\) must be shorter than SHUTDOWN_GRACE_MS \(25000\)/);
    expect(() => loadConfig({ DATABASE_CONNECT_TIMEOUT_MS: '10' })).toThrow(/DATABASE_CONNECT_TIMEOUT_MS must be at least 100/);
    expect(loadConfig({}).requestBodyTimeoutMs).toBe(10_000);
    expect(loadConfig({ REQUEST_BODY_TIMEOUT_MS: '30000' }).requestBodyTimeoutMs).toBe(30_000);
    expect(() => loadConfig({ REQUEST_BODY_TIMEOUT_MS: '5' })).toThrow(/REQUEST_BODY_TIMEOUT_MS must be at least 100/);
    expect(loadConfig({}).requestBodyMinRate).toBe(1024);
    expect(loadConfig({ REQUEST_BODY_MIN_RATE: '0' }).requestBodyMinRate).toBe(0);
    expect(loadConfig({ REQUEST_BODY_MIN_RATE: '4096' }).requestBodyMinRate).toBe(4096);
    expect(() => loadConfig({ REQUEST_BODY_MIN_RATE: '1.5' })).toThrow(/REQUEST_BODY_MIN_RATE must be a non-negative integer, got "1.5"/);
    expect(() => loadConfig({ REQUEST_BODY_MIN_RATE: '-1' })).toThrow(/REQUEST_BODY_MIN_RATE must be a non-negative integer/);
  });
});

describe('DATABASE_READ_URL', () => {
  it('is unset by default, with a lag bound of 5 s that may be set', () => {
    expect(loadConfig({})).toMatchObject({ databaseReadUrl: undefined, databaseReadMaxLagMs: 5000 });
    expect(loadConfig({ DATABASE_READ_URL: 'postgres://replica/x', DATABASE_READ_MAX_LAG_MS: '250' })).toMatchObject({ databaseReadUrl: 'postgres://replica/x', databaseReadMaxLagMs: 250 });
    expect(() => loadConfig({ DATABASE_READ_MAX_LAG_MS: 'soon' })).toThrow(/DATABASE_READ_MAX_LAG_MS/);
  });
});

describe('DATABASE_PREPARED_STATEMENTS', () => {
  it('is named by default, unnamed when asked, and nothing else', () => {
    expect(loadConfig({}).databasePreparedStatements).toBe('named');
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'unnamed' }).databasePreparedStatements).toBe('unnamed');
    expect(() => loadConfig({ DATABASE_PREPARED_STATEMENTS: 'off' })).toThrow(/DATABASE_PREPARED_STATEMENTS must be one of named, unnamed, got "off"/);
  });
});
