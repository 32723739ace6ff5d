// The implementation plan as the API shows it (GET /v1/account/integration).
import { Type, type Static } from 'typebox';

export const IntegrationPlanItem = Type.Object({
  id: Type.String({ examples: ['card_decline'] }),
  title: Type.String(),
  required: Type.Boolean({ description: 'Live mode can be activated only once every required item is done.' }),
  status: Type.Union([Type.Literal('done'), Type.Literal('open')]),
  evidence: Type.Union([Type.String(), Type.Null()], {
    description: 'What shows the item done: the id of the object, event or request; null while open.',
  }),
});
export type PlanItem = Static<typeof IntegrationPlanItem>;

export const IntegrationPlan = Type.Object(
  {
    object: Type.Literal('integration_plan'),
    account: Type.String(),
    complete: Type.Boolean({ description: 'Every required item is done.' }),
    items: Type.Array(IntegrationPlanItem),
  },
  { $id: 'IntegrationPlan', title: 'IntegrationPlan', description: "The implementation plan, computed from what the account has done in test mode." },
);
export type IntegrationPlan = Static<typeof IntegrationPlan>;
