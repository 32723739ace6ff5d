// Helpers of the customer-action tests: a payment that needs 3-D Secure, and the customer's
// browser going through the pages and redirects (each hop by hand, as a browser follows 303s).
import { expect } from 'vitest';
import type { Api } from './helpers.js';
import { newOrder, pay } from './payments.js';

export const CHALLENGE_CARD = '4000000000003220';
export const MERCHANT_RETURN = 'https://shop.example.com/checkout/done?cart=42';

/** An order and a payment with the 3-D Secure card and a return_url; expects requires_action. */
export async function payWithChallenge(api: Api, extra: Record<string, unknown> = { return_url: MERCHANT_RETURN }) {
  const order = await newOrder(api);
  const res = await pay(api, order.id, CHALLENGE_CARD, extra);
  expect(res.status, res.text).toBe(201);
  return { order, payment: res.body, response: res };
}

/** One hop of the customer's browser: the answer, never following a redirect. */
export async function browse(url: string, form?: Record<string, string>) {
  const res = await fetch(url, {
    method: form ? 'POST' : 'GET',
    redirect: 'manual',
    ...(form ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() } : {}),
  });
  return { status: res.status, location: res.headers.get('location'), headers: res.headers, text: await res.text() };
}

/** Answers the challenge on its page; the 303 to our return endpoint is not followed. */
export async function answerChallenge(actionUrl: string, outcome: 'completed' | 'failed') {
  const page = await browse(actionUrl);
  expect(page.status, page.text).toBe(200);
  const answered = await browse(actionUrl, { outcome });
  expect(answered.status, answered.text).toBe(303);
  return answered.location!;
}
