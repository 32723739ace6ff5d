// The dashboard as a browser without the browser would use it: shared by the dashboard's page
// tests and the CLI tests that check what the dashboard shows after a command.

/** A browser without the browser: a cookie jar, and the CSRF token and form key of the last page. */
export class Visitor {
  cookies = new Map<string, string>();
  last = '';
  constructor(readonly base: string) {}

  async send(method: 'GET' | 'POST', path: string, form?: Record<string, string>) {
    const res = await fetch(this.base + path, {
      method,
      redirect: 'manual',
      headers: { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, value] = [pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1)];
      if (value) this.cookies.set(name, value);
      else this.cookies.delete(name);
    }
    this.last = await res.text();
    return { status: res.status, location: res.headers.get('location'), text: this.last, headers: res.headers };
  }

  get = (path: string) => this.send('GET', path);
  /** Posts a form of the last page with its CSRF token and its first idempotency key. */
  post = (path: string, fields: Record<string, string> = {}) => this.send('POST', path, { csrf: this.field('csrf'), idem: this.field('idem'), ...fields });

  field(name: string): string {
    return new RegExp(`name="${name}" value="([^"]*)"`).exec(this.last)?.[1] ?? '';
  }

  /** A visitor of the service at `base` signed in with an API key. */
  static async signedIn(base: string, key: string): Promise<Visitor> {
    const visitor = new Visitor(base);
    const res = await visitor.signIn({ key });
    if (res.status !== 303) throw new Error(`sign-in answered ${res.status}: ${res.text.slice(0, 200)}`);
    return visitor;
  }

  async signIn(credential: { key: string } | { code: string }) {
    await this.get('/dashboard/sign-in');
    const res = await this.send('POST', '/dashboard/sign-in', { csrf: this.field('csrf'), ...credential });
    return res;
  }
}
