// A TCP proxy between the service and PostgreSQL that a test can cut and restore, to play a
// database restart, a failover or a network cut without touching the shared PostgreSQL server
// (other test files use it). Cut: every open connection is reset and new ones are refused
// (accepted and reset at once, as a server that is going down does); restored: connections pass again.
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export interface DbProxy {
  /** The database URL with host and port replaced by the proxy's. */
  url: string;
  cut(): void;
  restore(): void;
  /** Connections opened through the proxy so far (tests check that a process reconnected). */
  readonly connections: number;
  close(): Promise<void>;
}

export async function startDbProxy(databaseUrl: string): Promise<DbProxy> {
  const target = new URL(databaseUrl);
  const sockets = new Set<net.Socket>();
  let down = false;
  let connections = 0;
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = net.createServer((downstream) => {
    track(downstream);
    if (down) return void downstream.resetAndDestroy();
    connections++;
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    track(upstream);
    downstream.pipe(upstream).pipe(downstream);
    downstream.once('close', () => upstream.destroy());
    upstream.once('close', () => downstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    cut() {
      down = true;
      for (const socket of sockets) socket.resetAndDestroy();
    },
    restore() {
      down = false;
    },
    get connections() {
      return connections;
    },
    async close() {
      down = true;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
