// Public identifiers are TypeIDs (`ord_01h...`); the database stores the UUIDv7 inside, which keeps
// keys 16 bytes wide and time-ordered, so "newest first" is an index scan on the id.
import { fromString, fromUUID, toUUID, typeidUnboxed } from 'typeid-js';

export const ID_PREFIXES = {
  paymentOrder: 'ord',
  payment: 'pay',
  refund: 'ref',
  capture: 'cap',
  dispute: 'dp',
  disputeResponse: 'dpr',
  payout: 'po',
  beneficiary: 'ben',
  mandate: 'mdt',
  customer: 'cus',
  paymentMethod: 'pm',
  event: 'evt',
  webhookEndpoint: 'we',
  connectorAccount: 'ca',
  balanceTransaction: 'txn',
  webhookDeliveryAttempt: 'wda',
  webhookTestObject: 'wht',
  account: 'acct',
  apiKey: 'key',
  request: 'req',
  vaultRecord: 'vr',
  void: 'void',
  reconciliationRun: 'rec',
} as const;

export type IdPrefix = (typeof ID_PREFIXES)[keyof typeof ID_PREFIXES];

export function newId(prefix: IdPrefix): { id: string; uuid: string } {
  const id = typeidUnboxed(prefix) as string;
  return { id, uuid: toUUID(id as never) };
}

export function toPublicId(prefix: IdPrefix, uuid: string): string {
  return fromUUID(uuid, prefix) as string;
}

/** The UUID inside `id`, or undefined when it is malformed or carries another prefix. */
export function parseId(prefix: IdPrefix, id: string): string | undefined {
  if (!id.startsWith(`${prefix}_`)) return undefined;
  try {
    return toUUID(fromString(id, prefix));
  } catch {
    return undefined;
  }
}

/** The fields every API object opens with, in the documented order: its public id, its type, its mode. */
export function objectHead<O extends string>(prefix: IdPrefix, object: O, row: { id: string; livemode: boolean }) {
  return { id: toPublicId(prefix, row.id), object, livemode: row.livemode };
}
