// Where an endpoint may point. A webhook URL is a request the service makes on the merchant's
// behalf, so it is checked when set (here) and again at every send (the sender re-resolves and
// re-checks the address, ssrf.ts), since DNS can change in between.
import type { WebhookConfig } from '../../config.js';
import { ApiError } from '../../kernel/errors.js';
import { hostOf, isForbiddenHostname } from './ssrf.js';

/** Live mode always refuses private destinations; test mode does unless configured to allow them. */
export function isGuarded(livemode: boolean, config: WebhookConfig): boolean {
  return livemode || config.testModePrivateDestinations === 'deny';
}

export function checkUrl(raw: string, livemode: boolean, config: WebhookConfig): string {
  const invalid = (message: string) => new ApiError('parameter_invalid', { param: 'url', message });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('url must be an absolute http or https URL.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('url must be an absolute http or https URL.');
  if (livemode && url.protocol !== 'https:') throw invalid('url must use https in live mode.');
  if (url.username || url.password) throw invalid('url must not contain credentials; receivers authenticate requests by their signature.');
  if (url.hash) throw invalid('url must not contain a fragment.');
  if (isGuarded(livemode, config) && isForbiddenHostname(hostOf(url))) {
    throw invalid(`url must not point at a private, loopback or link-local address${livemode ? ' in live mode' : ''}.`);
  }
  return raw;
}

