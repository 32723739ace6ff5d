// URLs a merchant gives for the customer's browser to be sent to (a payment's return_url, an
// order's success_url and cancel_url): absolute http(s) without credentials, https in live mode.
import { ApiError } from './errors.js';

/** `given` checked as a URL the customer may be sent to; its normalised form. */
export function customerUrl(given: string, param: string, livemode: boolean): string {
  let url: URL | undefined;
  try {
    url = new URL(given);
  } catch {
    url = undefined;
  }
  const allowed = livemode ? ['https:'] : ['https:', 'http:'];
  if (!url || !allowed.includes(url.protocol) || url.username !== '' || url.password !== '') {
    throw new ApiError('parameter_invalid', {
      param,
      message: `${param} must be an absolute ${livemode ? 'https' : 'http(s)'} URL without credentials${livemode ? ' (live mode)' : ''}.`,
    });
  }
  return url.href;
}
