// Network faults in front of a fake processor that has no fault controls of its own (the simulated
// processors' server), and the one fault every fake needs from its listener: refusing connections.
// The proxy forwards each request to the processor and can, for the next request to one path
// prefix (one processor of a family), answer the processor's own "nothing was done" error without
// forwarding, forward it and answer a bare 500 instead of the processor's answer, or forward it and
// never answer (the caller's deadline ends the call).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type ProxyFault = 'refuse' | 'server_error_after' | 'hang_after';

/** Stops accepting connections (those open are cut); the function returned listens again on the same port. */
export async function refuseConnections(server: http.Server): Promise<() => Promise<void>> {
  const { port, address } = server.address() as AddressInfo;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
  return () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, address, () => {
        server.off('error', reject);
        resolve();
      });
    });
}

export class FaultProxy {
  private readonly faults: ProxyFault[] = [];
  private readonly server = http.createServer((req, res) => void this.handle(req, res));
  url = '';

  constructor(
    private readonly target: string,
    /** Faults apply to requests whose path starts with it (one processor of the family). */
    private readonly prefix: string,
    /** The processor's own answer meaning "refused before acting". */
    private readonly refusal: { status: number; body: unknown },
  ) {}

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    return closed;
  }

  inject(fault: ProxyFault): void {
    this.faults.push(fault);
  }

  refuseConnections(): Promise<() => Promise<void>> {
    return refuseConnections(this.server);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let body = '';
    for await (const chunk of req) body += chunk;
    const fault = req.url!.startsWith(this.prefix) ? this.faults.shift() : undefined;
    const reply = (status: number, text: string, type = 'application/json') => res.writeHead(status, { 'content-type': type }).end(text);
    if (fault === 'refuse') return void reply(this.refusal.status, JSON.stringify(this.refusal.body));
    const answer = await fetch(this.target + req.url, {
      method: req.method,
      headers: { 'content-type': 'application/json' },
      body: req.method === 'GET' ? undefined : body,
    });
    const text = await answer.text();
    if (fault === 'server_error_after') return void reply(500, '<html><body>500 Internal Server Error</body></html>', 'text/html');
    // The processor acted; its answer never comes back (close() ends the connection).
    if (fault === 'hang_after') return;
    reply(answer.status, text);
  }
}
