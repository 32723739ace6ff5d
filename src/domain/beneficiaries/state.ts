import { defineStateMachine } from '../../kernel/state-machine.js';

export const BENEFICIARY_STATUSES = ['active', 'disabled'] as const;
export type BeneficiaryStatus = (typeof BENEFICIARY_STATUSES)[number];

export const beneficiaryStates = defineStateMachine<BeneficiaryStatus, 'payable'>(
  'beneficiary',
  {
    active: ['disabled'],
    // Kept for the history of its payouts; a new beneficiary is created to pay the account again.
    disabled: [],
  },
  { payable: ['active'] },
);
