// What every fake processor shares: its HTTP server on a loopback port, the faults queued for its
// next requests, and refusing connections (the processor unreachable: nothing sent).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { refuseConnections } from './fault-proxy.js';

export abstract class FakeProcessor<Fault> {
  protected readonly faults: Fault[] = [];
  private readonly server = http.createServer((req, res) => void this.handle(req, res));
  url = '';

  protected abstract handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void>;

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** The next requests this fake counts (each says which) meet these faults, one each. */
  inject(...faults: Fault[]): void {
    this.faults.push(...faults);
  }

  /** Connections are refused (the port closed) until the function returned is called. */
  refuseConnections(): Promise<() => Promise<void>> {
    return refuseConnections(this.server);
  }
}
