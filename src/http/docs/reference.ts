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

/**
 * The guides' code blocks wrap instead of scrolling: the introduction's column is narrow beside
 * its examples, and a scrolled block hides the end of each command. Important, because Scalar's
 * own rules for highlighted code are more specific than a selector of ours and reset both.
 */
const WRAPPED_CODE = '.markdown pre code, .markdown pre code * { white-space: pre-wrap !important; overflow-wrap: anywhere !important; }';

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
      // Scalar turns its hosted features on by default when the page is opened on localhost (as a
      // newcomer does): "Ask AI" (which uploads the document to Scalar) and the developer tools'
      // Configure, Share and Deploy. None works offline or on this origin alone. (This version,
      // the newest whose whole tree supports Node 20, has no MCP generator to turn off.)
      agent: { disabled: true },
      // No icon: without one the browser asks this origin for /favicon.ico, a 404 in its console.
      favicon: 'data:,',
      showDeveloperTools: 'never',
      customCss: WRAPPED_CODE,
    },
  });
}
