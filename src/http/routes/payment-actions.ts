// The customer's side of customer actions (3-D Secure, redirects): pages and redirects for a
// browser, with no API key. GET /v1/payments/{id}/action/{token} posts a processor's form,
// GET|POST /v1/payments/{id}/return/{token} brings the customer back (the processor is asked, then
// the merchant's return_url), and GET|POST /v1/connectors/{name}/challenges/{reference}/{challenge}
// is the simulated processors' challenge page. Each is opened by a random secret in its path.
import { Type } from 'typebox';
import type { App } from '../types.js';
import type { Db } from '../../storage/db.js';
import { ApiError } from '../../kernel/errors.js';
import { errorResponses } from '../../kernel/schemas.js';
import { answerSimulatorChallenge, pendingAction, returnFromAction } from '../../domain/payments/actions.js';
import type { Runtime } from '../../runtime.js';
import { escapeHtml, formFields, postForm, requestParams, sendPage } from '../pages.js';

const Secret = (example: string) => Type.String({ minLength: 1, maxLength: 128, examples: [example] });
const PAYMENT_ID_EXAMPLE = 'pay_01jd8x3v0pe7wbz0m4k6f2n9qa';
const ActionParams = Type.Object({ id: Type.String({ maxLength: 64, examples: [PAYMENT_ID_EXAMPLE] }), token: Secret('Xq3mV9bT2kLp0sRw8yZc1dFh4jNa6eGu') });
const ChallengeParams = Type.Object({
  name: Type.String({ maxLength: 64, examples: ['simulator_a'] }),
  reference: Type.String({ maxLength: 64, examples: [PAYMENT_ID_EXAMPLE] }),
  challenge: Secret('9f86d081884c7d659a2feaa0c55ad015'),
});
const Html = { description: 'An HTML page for the customer.', content: { 'text/html': { schema: Type.String() } } };
const SeeOther = { description: 'Sends the customer on (Location).', type: 'null' } as const;
const tags = ['customer actions'];

export function registerPaymentActionRoutes(app: App, db: Db, rt: Runtime) {
  app.register(async (scope) => {
    // Processors and our own pages post forms back; the fields are read as strings, never as an outcome.
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, formFields);

    scope.get(
      '/v1/payments/:id/action/:token',
      {
        config: { auth: false },
        schema: {
          tags,
          operationId: 'openCustomerAction',
          summary: "The page that takes the customer to a processor that wants a form posted (a payment's next_action.url)",
          security: [],
          params: ActionParams,
          response: { 200: Html, ...errorResponses('resource_missing') },
        },
      },
      async (req, reply) => {
        const { id, token } = req.params as { id: string; token: string };
        const action = await pendingAction(db, id, token);
        if (!action) return sendPage(reply, 'Nothing to do', '<p>This payment no longer waits for you. You may close this page.</p>');
        if (action.method === 'GET') return reply.redirect(action.url, 303);
        const form = postForm(action.url, action.data ?? {}, [{ name: '', value: '', label: 'Continue to your bank' }]);
        return sendPage(reply, 'Confirm your payment', `<p>Your bank needs to confirm this payment.</p>${form}`);
      },
    );

    scope.route({
      method: ['GET', 'POST'],
      url: '/v1/payments/:id/return/:token',
      config: { auth: false },
      // Not part of the API (processors send the customer here, at the URL we gave them): docs/payments.md describes it.
      schema: { hide: true, params: ActionParams },
      handler: async (req, reply) => {
        const { id, token } = req.params as { id: string; token: string };
        return reply.redirect(await returnFromAction(db, rt, id, token, requestParams(req.query, req.body)), 303);
      },
    });

    scope.get(
      '/v1/connectors/:name/challenges/:reference/:challenge',
      {
        config: { auth: false },
        schema: {
          tags,
          operationId: 'openSimulatorChallenge',
          summary: "A simulated processor's 3-D Secure challenge page (test card 4000000000003220)",
          security: [],
          params: ChallengeParams,
          response: { 200: Html, ...errorResponses('resource_missing') },
        },
      },
      async (req, reply) => {
        const { reference } = req.params as { reference: string };
        const form = postForm(req.url.split('?')[0]!, {}, [
          { name: 'outcome', value: 'completed', label: 'Complete' },
          { name: 'outcome', value: 'failed', label: 'Fail' },
        ]);
        return sendPage(reply, 'Simulated 3-D Secure', `<p>Test mode: authenticate the payment ${escapeHtml(reference)}, or fail the challenge.</p>${form}`);
      },
    );

    scope.post(
      '/v1/connectors/:name/challenges/:reference/:challenge',
      {
        config: { auth: false },
        schema: {
          tags,
          operationId: 'answerSimulatorChallenge',
          summary: "The answer on a simulated processor's challenge page",
          security: [],
          params: ChallengeParams,
          response: { 200: Html, 303: SeeOther, ...errorResponses('resource_missing') },
        },
      },
      async (req, reply) => {
        const outcome = requestParams({}, req.body).outcome;
        if (outcome !== 'completed' && outcome !== 'failed') throw new ApiError('parameter_invalid', { param: 'outcome', message: 'outcome must be completed or failed.' });
        const { name, reference, challenge } = req.params as { name: string; reference: string; challenge: string };
        const answered = await answerSimulatorChallenge(rt, name, reference, challenge, outcome);
        if (!answered) throw new ApiError('resource_missing', { message: 'No such challenge.' });
        if (answered.next) return reply.redirect(answered.next, 303);
        return sendPage(reply, 'Challenge answered', '<p>You may close this page.</p>');
      },
    );
  });
}
