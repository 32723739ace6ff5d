// jsonb keeps an object's keys in its own order (shorter keys first, then bytewise), not in the
// order they were given. Answers built in memory, before the row is stored, put their objects in
// that order too, so that a one-statement create answers with the same bytes as a later GET or the
// general path (which both read the object back from the database).
export function inJsonbOrder<T extends Record<string, unknown>>(value: T): T {
  const keys = Object.keys(value);
  const sorted = keys
    .map((key) => ({ key, bytes: Buffer.from(key, 'utf8') }))
    .sort((a, b) => a.bytes.length - b.bytes.length || Buffer.compare(a.bytes, b.bytes))
    .map((k) => k.key);
  if (sorted.every((key, i) => key === keys[i])) return value;
  const out: Record<string, unknown> = {};
  for (const key of sorted) out[key] = value[key];
  return out as T;
}
