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
    const refused = 'url must not point at a private, loopback or link-local address';
    // In test mode the refusal is a setting of the deployment: say which, so a developer can ask for it.
    throw invalid(
      livemode
        ? `${refused} in live mode.`
        : `${refused}: this deployment refuses them in test mode too (WEBHOOK_TEST_MODE_PRIVATE_DESTINATIONS=deny, the default when NODE_ENV=production). ` +
            'Its operator may set WEBHOOK_TEST_MODE_PRIVATE_DESTINATIONS=allow for local development; otherwise use a public URL, such as a tunnel to your machine.',
    );
  }
  return raw;
}

