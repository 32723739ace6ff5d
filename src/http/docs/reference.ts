// The API reference people read, at /docs: Scalar's page over the served OpenAPI document, its
// script served by the service itself (no CDN: it works offline and behind a strict egress), its
// guides from guides.ts. The CSP keeps the page from talking to anything but this service.
import apiReference from '@scalar/fastify-api-reference';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../types.js';

const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  // The page's configuration is an inline script and its components inject their styles.
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

export async function registerReference(app: App): Promise<void> {
  await app.register(apiReference, {
    routePrefix: '/docs',
    logLevel: 'warn',
    hooks: {
      onRequest: async (_req: FastifyRequest, reply: FastifyReply) => {
        reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
      },
    },
    configuration: {
      pageTitle: 'Payment orchestration API',
      // No fonts from Scalar's servers, no telemetry, no request proxy: nothing leaves for a third party.
      withDefaultFonts: false,
      telemetry: false,
      hideClientButton: true,
      defaultOpenAllTags: false,
    },
  });
}
