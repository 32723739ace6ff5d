// What a customer is shown of an account: its display name (the hosted checkout's merchant, the
// dashboard's header) and the support contact the checkout offers. Checked here, once, for every
// caller (the CLI's create and update, the first-start bootstrap), so no page shows a name or an
// address the rules below would refuse.

/** The display name's bounds: long enough for a legal name, short enough for a checkout header. */
export const NAME_MAX_LENGTH = 100;
/** RFC 5321's limits: 64 characters before the @, 254 for the whole address. */
const EMAIL_MAX_LENGTH = 254;
const EMAIL_LOCAL_MAX_LENGTH = 64;
// One @, a local part of printable characters, a domain of dot-separated labels with a TLD: what a
// mail client accepts from a `mailto:` link. Quoted local parts and IP literals are refused on purpose.
const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;

export type ProfileField = 'name' | 'support_email';

/** A display name or support contact the rules refuse; `field` says which, `problem` what is wrong. */
export class AccountProfileError extends Error {
  constructor(
    readonly field: ProfileField,
    readonly problem: string,
  ) {
    super(`${field === 'name' ? 'name' : 'support email'} ${problem}`);
    this.name = 'AccountProfileError';
  }
}

export interface AccountProfile {
  name?: string;
  /** null removes the support contact. */
  supportEmail?: string | null;
}

export function checkDisplayName(value: string): string {
  const name = value.trim();
  const length = [...name].length;
  if (length === 0) throw new AccountProfileError('name', 'must not be empty');
  if (length > NAME_MAX_LENGTH) throw new AccountProfileError('name', `must be at most ${NAME_MAX_LENGTH} characters, got ${length}`);
  // Control characters would reach JSON output, logs and page titles; they are never part of a useful name.
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(name)) throw new AccountProfileError('name', 'must not contain control characters');
  return name;
}

export function checkSupportEmail(value: string): string {
  const email = value.trim();
  const fail = (why: string) => new AccountProfileError('support_email', `${why}, got ${JSON.stringify(email.slice(0, 80))}`);
  if (email.length > EMAIL_MAX_LENGTH) throw fail(`must be at most ${EMAIL_MAX_LENGTH} characters`);
  if (!EMAIL.test(email)) throw fail('must be an email address such as support@example.com');
  if (email.indexOf('@') > EMAIL_LOCAL_MAX_LENGTH) throw fail(`must have at most ${EMAIL_LOCAL_MAX_LENGTH} characters before the @`);
  if (email.startsWith('.') || email.includes('..') || email.includes('.@')) throw fail('must not have an empty part between dots');
  return email;
}

/** The profile as it will be stored: every given field checked, absent ones left out. */
export function checkProfile(profile: AccountProfile): AccountProfile {
  return {
    ...(profile.name === undefined ? {} : { name: checkDisplayName(profile.name) }),
    ...(profile.supportEmail === undefined ? {} : { supportEmail: profile.supportEmail === null ? null : checkSupportEmail(profile.supportEmail) }),
  };
}
