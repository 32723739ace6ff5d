import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { createEncryptor, DEVELOPMENT_KEY, EncryptionError, parseEncryptionKeys } from '../../src/kernel/encryption.js';
import { newWebhookSecret, signature, signedHeaders } from '../../src/domain/webhooks/signing.js';
import { isForbiddenAddress, isForbiddenHostname } from '../../src/domain/webhooks/ssrf.js';
import { nextRetryDelayMs } from '../../src/domain/webhooks/delivery/retry.js';
import { parseRetryAfter } from '../../src/domain/webhooks/sender.js';
import { loadConfig } from '../../src/config.js';

const key = (id: string) => `${id}:${crypto.randomBytes(32).toString('base64')}`;

describe('encryption at rest', () => {
  it('round-trips, binds the context, and opens values sealed by any configured key', () => {
    const [a, b] = parseEncryptionKeys(`${key('k2')},${key('k1')}`);
    const old = createEncryptor([b!]);
    const sealedOld = old.encrypt('account 12345678', 'ben:1');
    const current = createEncryptor([a!, b!]);
    expect(current.activeKeyId).toBe('k2');
    const sealed = current.encrypt('account 12345678', 'ben:1');
    expect(sealed).toMatch(/^v1\.k2\./);
    expect(sealed).not.toContain('12345678');
    expect(current.encrypt('account 12345678', 'ben:1')).not.toBe(sealed); // fresh nonce
    expect(current.decrypt(sealed, 'ben:1')).toBe('account 12345678');
    expect(current.decrypt(sealedOld, 'ben:1')).toBe('account 12345678');
    expect(() => current.decrypt(sealed, 'ben:2')).toThrow(EncryptionError);
    const tampered = sealed.slice(0, -3) + (sealed.endsWith('AAA') ? 'BBB' : 'AAA');
    expect(() => current.decrypt(tampered, 'ben:1')).toThrow(EncryptionError);
    expect(() => old.decrypt(sealed, 'ben:1')).toThrow(/k2/);
  });

  it('refuses malformed keys in configuration', () => {
    expect(() => parseEncryptionKeys('nocolon')).toThrow(EncryptionError);
    expect(() => parseEncryptionKeys(`a:${Buffer.alloc(16).toString('base64')}`)).toThrow(/32 bytes/);
    expect(() => parseEncryptionKeys(`${key('a')},${key('a')}`)).toThrow(/unique/);
    expect(() => loadConfig({ ENCRYPTION_KEYS: 'x' })).toThrow(/ENCRYPTION_KEYS/);
    const config = loadConfig({ ENCRYPTION_KEYS: key('prod1') });
    expect(config.encryptionKeys[0]!.id).toBe('prod1');
    expect(config.usingDevelopmentEncryptionKey).toBe(false);
    expect(loadConfig({}).encryptionKeys).toEqual([DEVELOPMENT_KEY]);
  });
});

describe('Standard Webhooks signatures', () => {
  it('verify with the published library, one secret or several', () => {
    const secret = newWebhookSecret();
    const other = newWebhookSecret();
    const body = JSON.stringify({ id: 'evt_1', hello: 'wörld' });
    const ts = Math.floor(Date.now() / 1000);
    const headers = signedHeaders([other, secret], 'evt_1', ts, body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(new Webhook(other).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(() => new Webhook(newWebhookSecret()).verify(body, { ...headers })).toThrow();
    expect(() => new Webhook(secret).verify(body + ' ', { ...headers })).toThrow();
    // the library's own signer agrees byte for byte
    expect(new Webhook(secret).sign('evt_1', new Date(ts * 1000), body)).toBe(signature(secret, 'evt_1', ts, body));
  });

  it('matches the specification test vector', () => {
    // From the Standard Webhooks specification's reference tests.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const sig = signature(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
    expect(sig).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });
});

describe('SSRF guard', () => {
  it('refuses loopback, private, link-local, metadata and reserved addresses', () => {
    for (const ip of [
      '127.0.0.1', '127.8.9.10', '10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.0.1', '169.254.169.254', '100.64.0.1',
      '0.0.0.0', '224.0.0.1', '255.255.255.255', '198.18.0.1', '::1', '::', 'fe80::1', 'fd00:ec2::254', 'fc00::1',
      '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '64:ff9b::a9fe:a9fe', '::ffff:169.254.169.254', 'ff02::1',
      '::7f00:1', '::127.0.0.1', '::ffff:0:a00:1', '2002:7f00:1::', '2002:c0a8:101::1', '64:ff9b:1::1', '2001::1', 'fec0::1', 'fe80::1%eth0',
    ]) {
      expect(isForbiddenAddress(ip), ip).toBe(true);
    }
    for (const ip of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2002:808:808::1', '64:ff9b::8.8.8.8']) {
      expect(isForbiddenAddress(ip), ip).toBe(false);
    }
    expect(isForbiddenAddress('not-an-ip')).toBe(true);
    for (const host of ['localhost', 'api.localhost', 'LOCALHOST.', 'metadata.google.internal', 'printer.local', 'intranet', '127.0.0.1']) {
      expect(isForbiddenHostname(host), host).toBe(true);
    }
    expect(isForbiddenHostname('hooks.example.com')).toBe(false);
  });
});

describe('retry schedule', () => {
  const policy = { scheduleS: [0, 5, 300, 1800], jitterRatio: 0.2, random: () => 0.5 };
  it('follows the schedule, spreads it with jitter and honours Retry-After', () => {
    expect(nextRetryDelayMs(policy, 1, null)).toBe(5000);
    expect(nextRetryDelayMs(policy, 2, null)).toBe(300_000);
    expect(nextRetryDelayMs(policy, 4, null)).toBeNull();
    expect(nextRetryDelayMs({ ...policy, random: () => 0 }, 1, null)).toBe(4000);
    expect(nextRetryDelayMs({ ...policy, random: () => 1 }, 1, null)).toBe(6000);
    expect(nextRetryDelayMs(policy, 1, 60)).toBe(60_000);
    expect(nextRetryDelayMs(policy, 2, 60)).toBe(300_000);
    expect(nextRetryDelayMs(policy, 1, 10 ** 9)).toBe(1800_000); // capped at the longest delay
  });
  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now)).toBe(60);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });
  it('is configurable, per mode', () => {
    const config = loadConfig({ WEBHOOK_RETRY_SCHEDULE_S: '0,10,60', WEBHOOK_TEST_RETRY_SCHEDULE_S: '0,0.5,1' });
    expect(config.webhooks.retryScheduleS).toEqual({ live: [0, 10, 60], test: [0, 0.5, 1] });
    expect(loadConfig({}).webhooks.retryScheduleS.live).toEqual([0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400]);
    expect(loadConfig({}).webhooks).toMatchObject({ timeoutMs: 15_000, retryJitterRatio: 0.2, disableAfterFailingS: 5 * 86400, testModePrivateDestinations: 'allow' });
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE_S: '0,x' })).toThrow(/WEBHOOK_RETRY_SCHEDULE_S/);
    expect(() => loadConfig({ WEBHOOK_TIMEOUT_MS: '20000', WEBHOOK_LEASE_MS: '10000' })).toThrow(/LEASE/);
  });
});

describe('the webhooks guide (docs/webhooks.md)', () => {
  it("plain node:crypto verification snippet verifies our signatures and refuses forgeries", async () => {
    const guide = fs.readFileSync(path.join(import.meta.dirname, '..', '..', 'docs', 'webhooks.md'), 'utf8');
    const snippet = /```js\n(import crypto from 'node:crypto';\n\nexport function verifyWebhook[\s\S]*?)```/.exec(guide)?.[1];
    expect(snippet).toBeDefined();
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'webhooks-guide-')), 'verify.mjs');
    fs.writeFileSync(file, snippet!);
    const { verifyWebhook } = await import(pathToFileURL(file).href);
    const secret = newWebhookSecret();
    const previous = newWebhookSecret();
    const body = JSON.stringify({ id: 'evt_1', data: { object: { version: 2 } } });
    const now = Math.floor(Date.now() / 1000);
    expect(verifyWebhook(secret, signedHeaders([secret], 'evt_1', now, body), body)).toEqual(JSON.parse(body));
    expect(verifyWebhook(previous, signedHeaders([secret, previous], 'evt_1', now, body), body).id).toBe('evt_1');
    expect(() => verifyWebhook(newWebhookSecret(), signedHeaders([secret], 'evt_1', now, body), body)).toThrow(/signature/);
    expect(() => verifyWebhook(secret, signedHeaders([secret], 'evt_1', now - 600, body), body)).toThrow(/timestamp/);
    expect(() => verifyWebhook(secret, signedHeaders([secret], 'evt_1', now, body), body.replace('2', '3'))).toThrow(/signature/);
    expect(() => verifyWebhook(secret, { 'webhook-id': 'evt_1' }, body)).toThrow(/missing/);
  });
});
