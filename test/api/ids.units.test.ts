// Public ids are encoded by src/kernel/ids.ts and decoded by typeid-js: the two must agree on every
// UUID, or an id the service hands out would not come back to the row it names.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fromUUID, toUUID, fromString } from 'typeid-js';
import { newId, parseId, toPublicId, uuidText } from '../../src/kernel/ids.js';

const edges = [Buffer.alloc(16, 0), Buffer.alloc(16, 0xff), Buffer.from('0123456789abcdef0123456789abcdef', 'hex'), Buffer.from('80000000000000000000000000000001', 'hex')];

describe('public ids', () => {
  it('encodes any 16 bytes as typeid-js does', () => {
    for (const bytes of [...edges, ...Array.from({ length: 2000 }, () => crypto.randomBytes(16))]) {
      const uuid = uuidText(bytes);
      expect(toPublicId('ord', uuid)).toBe(fromUUID(uuid, 'ord'));
    }
  });

  it('decodes what it encodes back to the same UUID', () => {
    for (const uuid of Array.from({ length: 2000 }, () => crypto.randomUUID())) {
      const id = toPublicId('ord', uuid);
      expect(parseId('ord', id)).toBe(uuid);
      expect(toUUID(fromString(id, 'ord'))).toBe(uuid);
      expect(parseId('pay', id)).toBeUndefined();
    }
  });

  it('makes new ids whose public form carries their UUID, in increasing order', () => {
    const made = Array.from({ length: 500 }, () => newId('pay'));
    for (const { id, uuid } of made) {
      expect(id).toMatch(/^pay_[0-7][0-9a-hjkmnp-tv-z]{25}$/);
      expect(parseId('pay', id)).toBe(uuid);
      expect(fromUUID(uuid, 'pay')).toBe(id);
    }
    const uuids = made.map((m) => m.uuid);
    expect([...uuids].sort()).toEqual(uuids);
    expect(new Set(uuids).size).toBe(uuids.length);
  });
});
