// `vault rotate` and `vault audit` (docs/vault.md): the operator's side of the card vault. Both
// run with the keys of the configuration they run under: the service's own when the command goes
// through its admin socket (embedded database), else this process's VAULT_KEYS.
import { parseId } from '../kernel/ids.js';
import { DEFAULT_AUDIT_LIMIT, listUnsealings } from '../vault/audit.js';
import { DEFAULT_ROTATION_BATCH, type RotationReport } from '../vault/rotate.js';
import { createVault } from '../vault/vault.js';
import { UsageError, requireInteger } from './args.js';
import { PROGRAM, type Command } from './onboarding.js';

const MAX_AUDIT_LIMIT = 10_000;

export const VAULT_COMMANDS: Command[] = [
  {
    name: 'vault rotate',
    synopsis: '[--batch-size N] [--max-batches N]',
    summary: 'Re-wrap every saved card\'s data key under the first VAULT_KEYS key, without re-encrypting card data',
    details:
      'Put the new key first in VAULT_KEYS and keep the old ones after it, restart the service, then run this.\n' +
      `Each batch (--batch-size, default ${DEFAULT_ROTATION_BATCH}) commits on its own: an interrupted run, or one stopped by\n` +
      '--max-batches, is continued by running it again. Once `complete` is true the old keys can be removed.',
    positionals: [],
    options: { 'batch-size': { type: 'string' }, 'max-batches': { type: 'string' } },
    prepare({ values }) {
      const batchSize = values['batch-size'] === undefined ? undefined : requireInteger('batch-size', values['batch-size'] as string, 1, 10_000);
      const maxBatches = values['max-batches'] === undefined ? undefined : requireInteger('max-batches', values['max-batches'] as string, 1, 1_000_000);
      return {
        run: async (db, config) => {
          if (!config) throw new UsageError('vault rotate needs the service configuration (VAULT_KEYS)');
          return createVault(config.vaultKeys).rotate(db, { batchSize, maxBatches });
        },
        notes: (report: RotationReport) =>
          report.complete
            ? [`every data key is under ${report.active_key}; keys after it in VAULT_KEYS are no longer needed by the vault`]
            : [`${report.remaining} data keys are still under an older key: run ${PROGRAM} vault rotate again`],
      };
    },
  },
  {
    name: 'vault audit',
    synopsis: '[--record VR_ID] [--limit N]',
    summary: 'List unsealings of saved cards, newest first: which record, for which movement, when',
    details: `--limit defaults to ${DEFAULT_AUDIT_LIMIT} (at most ${MAX_AUDIT_LIMIT}). Card data is never shown.`,
    positionals: [],
    options: { record: { type: 'string' }, limit: { type: 'string' } },
    prepare({ values }) {
      const record = values.record as string | undefined;
      const recordUuid = record === undefined ? undefined : parseId('vr', record);
      if (record !== undefined && !recordUuid) throw new UsageError(`--record must be a vault record id (vr_ followed by 26 characters), got ${JSON.stringify(record)}`);
      const limit = values.limit === undefined ? undefined : requireInteger('limit', values.limit as string, 1, MAX_AUDIT_LIMIT);
      return { run: (db) => listUnsealings(db, { recordUuid, limit }) };
    },
  },
];
