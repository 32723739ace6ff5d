// The embedded database (PGlite) can be opened by one process only, so while the service runs on
// it the CLI cannot open it. The service therefore listens on a Unix socket inside the data
// directory, and the CLI sends its command line there: the service runs it on its own open
// database (dispatch.ts, the very code the CLI runs) and sends back the exit code, stdout and
// stderr, which the CLI prints as if it had run the command itself.
//
// Who may use it: the socket lives in a directory of mode 0700 and is itself 0600, both owned by
// the user the service runs as, so only that user (and root) can connect: the same people who can
// read the data directory, and with it the whole database, anyway. It is never a network port.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { Database } from '../storage/db.js';
import type { CliIo } from './commands.js';

/** What the service answers: what the command would have printed, and its exit code. */
export interface Answer {
  code: number;
  stdout: string;
  stderr: string;
}

// A command line is a few hundred bytes; the cap keeps a confused client from filling memory.
const MAX_REQUEST_BYTES = 64 * 1024;
// sun_path holds 108 bytes on Linux (104 on macOS), its terminating NUL included.
const MAX_SOCKET_PATH = 103;

export const adminSocketPath = (dataDir: string) => path.resolve(dataDir, 'admin', 'cli.sock');

/** The socket's directory: created 0700, or checked to be a real directory of ours and made 0700. */
function privateDirectory(dir: string): void {
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const stat = fs.lstatSync(dir);
  if (!stat.isDirectory()) throw new Error(`${dir} is not a directory`);
  if (process.getuid && stat.uid !== process.getuid()) throw new Error(`${dir} belongs to another user (uid ${stat.uid})`);
  fs.chmodSync(dir, 0o700);
}

function readLine(socket: net.Socket, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      const end = text.indexOf('\n');
      if (end !== -1) resolve(text.slice(0, end));
      else if (text.length > limit) reject(new Error('request too large'));
    });
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

const isArgv = (value: unknown): value is string[] => Array.isArray(value) && value.every((a) => typeof a === 'string');

export interface AdminChannel {
  path: string;
  /** Takes no new command, lets the ones running finish, and removes the socket. */
  close(): Promise<void>;
}

/**
 * Listens for CLI command lines on the data directory's socket; runs each with `run` on the
 * service's database. Undefined when no socket can be made there (the CLI then says the data
 * directory is in use, as before).
 */
export async function openAdminChannel(
  opts: { dataDir: string; database: Database; config: Config; log: FastifyBaseLogger },
  run: (argv: string[], io: CliIo) => Promise<number>,
): Promise<AdminChannel | undefined> {
  const socketPath = adminSocketPath(opts.dataDir);
  if (process.platform === 'win32' || Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
    opts.log.warn({ path: socketPath }, 'admin channel not opened (no Unix socket here): the CLI cannot run while the service holds the data directory');
    return undefined;
  }
  privateDirectory(path.dirname(socketPath));
  // A socket left by a process that died: the data directory's lock is ours, so no live service uses it.
  fs.rmSync(socketPath, { force: true });

  const running = new Set<Promise<unknown>>();
  const sockets = new Set<net.Socket>();
  const serve = async (socket: net.Socket) => {
    const line = await readLine(socket, MAX_REQUEST_BYTES);
    const request = JSON.parse(line) as { argv?: unknown };
    if (!isArgv(request.argv)) throw new Error('request without argv');
    const answer: Answer = { code: 1, stdout: '', stderr: '' };
    const io: CliIo = {
      // Nothing run here reads the environment: the service's own configuration and database apply.
      env: {},
      stdout: (text) => void (answer.stdout += text),
      stderr: (text) => void (answer.stderr += text),
      service: { database: opts.database, config: opts.config },
    };
    answer.code = await run(request.argv, io);
    // Only the command's name: its arguments may hold names or addresses the log has no need of.
    opts.log.info({ command: request.argv.slice(0, 2).filter((a) => /^[a-z-]+$/.test(a)).join(' '), code: answer.code }, 'cli command run for the CLI');
    socket.end(JSON.stringify(answer) + '\n');
  };
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const done = serve(socket).catch((err: unknown) => {
      opts.log.warn({ err }, 'admin channel: request refused');
      socket.destroy();
    });
    running.add(done);
    void done.finally(() => running.delete(done));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  // Its directory is 0700 already, so nobody else could reach the socket before this.
  fs.chmodSync(socketPath, 0o600);
  return {
    path: socketPath,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.allSettled([...running]);
      for (const socket of sockets) socket.destroy();
      await closed;
      fs.rmSync(socketPath, { force: true });
    },
  };
}

/**
 * Runs the command line in the service that holds `dataDir`, through its socket; undefined when
 * no service listens there (none runs, or one without the channel), so the CLI runs it itself.
 */
export function runThroughService(dataDir: string, argv: string[]): Promise<Answer | undefined> {
  const socketPath = adminSocketPath(dataDir);
  if (!fs.existsSync(socketPath)) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let connected = false;
    socket.once('connect', () => {
      connected = true;
      socket.write(JSON.stringify({ argv }) + '\n');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      // Nobody listens (a socket left behind): run it here, where the data directory's lock decides.
      if (!connected && (err.code === 'ECONNREFUSED' || err.code === 'ENOENT')) resolve(undefined);
      else reject(err);
    });
    readLine(socket, Infinity).then((line) => {
      if (!line) return reject(new Error('the service closed the admin channel without an answer; see its log'));
      resolve(JSON.parse(line) as Answer);
    }, reject);
  });
}
