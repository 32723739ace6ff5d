// The answers fastify and Node's HTTP parser give before any route, hook or error handler of ours
// runs — a path whose %-escapes do not decode, a path parameter past the router's length limit,
// a request that is not valid HTTP (a NUL or DEL byte in a header value, headers too large, too
// slow to arrive) — rendered as the same typed error body, with a request id, as every other answer.
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import { sendOutcome } from './types.js';

/** The router's errors (fastify's `frameworkErrors` option) in the catalogue's words. */
export function routerError(error: FastifyError): ApiError {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return new ApiError('path_invalid');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError('path_too_long');
    default:
      return new ApiError('internal_error');
  }
}

/**
 * fastify's `frameworkErrors` option: the request has an id and a logger, but no route matched, so
 * no hook runs — the request's one log line is written here, and `answered` learns the answer.
 */
export function routerErrorHandler(answered?: (method: string, status: number) => void) {
  return (error: FastifyError, req: FastifyRequest, reply: FastifyReply): void => {
    const apiError = routerError(error);
    if (apiError.status >= 500) req.log.error({ err: error }, 'request failed');
    reply.header('request-id', req.id);
    void sendOutcome(reply, { status: apiError.status, body: JSON.stringify(apiError.body(req.id)) });
    req.log.info({ method: req.method, status: apiError.status, code: apiError.code }, 'request');
    answered?.(req.method, apiError.status);
  };
}

/** A parser error of Node's HTTP server in the catalogue's words. */
export function clientError(err: NodeJS.ErrnoException): ApiError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError('headers_too_large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError('request_timeout');
    default: {
      // llhttp's reason ("Invalid header value char", "Invalid method") says what to fix; it
      // names no header and repeats nothing of the request.
      const reason = (err as { reason?: unknown }).reason;
      const detail = typeof reason === 'string' && /^[\w .,'-]{1,80}$/.test(reason) ? ` (${reason.toLowerCase()})` : '';
      return new ApiError('request_malformed', { message: `The request is not valid HTTP/1.1 and was not read${detail}.` });
    }
  }
}

/**
 * The HTTP server's 'clientError' listener (fastify's `clientErrorHandler`, called with the fastify
 * instance as `this`): no request object exists, so the answer is written on the socket as it
 * stands, typed and with a fresh request id, and the connection is closed since the parser cannot
 * resume on it. `answered` learns the status.
 */
export function clientErrorHandler(answered?: (method: undefined, status: number) => void) {
  return function (this: unknown, err: NodeJS.ErrnoException, socket: Duplex): void {
    // A reset connection, or one whose answer has begun, cannot take one more.
    const current = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || socket.destroyed || !socket.writable || current?.headersSent) {
      socket.destroy(err);
      return;
    }
    const requestId = newId('req').id;
    const error = clientError(err);
    const body = JSON.stringify(error.body(requestId));
    socket.end(
      `HTTP/1.1 ${error.status} ${http.STATUS_CODES[error.status]}\r\n` +
        `content-type: application/json; charset=utf-8\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        `request-id: ${requestId}\r\n` +
        `connection: close\r\n\r\n${body}`,
    );
    (this as { log: { info(obj: object, msg: string): void } }).log.info({ request_id: requestId, status: error.status, code: error.code, reason: err.code }, 'client error');
    answered?.(undefined, error.status);
  };
}
