// Request and response schemas of connector accounts (/v1/connector-accounts) and the catalogue
// (GET /v1/connectors): validation, handler types and OpenAPI at once.
import { Type, type Static } from 'typebox';
import { CATALOGUE } from '../../connectors/catalogue.js';
import { ListQuery, Metadata, MetadataView, OneOf, Timestamp, Versioned } from '../../kernel/schemas.js';
import { DEFAULT_GRACE_PERIOD_S, MAX_GRACE_PERIOD_S } from '../webhooks/schema.js';

export const CONNECTOR_ACCOUNT_STATUSES = ['enabled', 'disabled'] as const;
export type ConnectorAccountStatus = (typeof CONNECTOR_ACCOUNT_STATUSES)[number];

const CONNECTOR_NAMES = CATALOGUE.map((entry) => entry.name);
const CREDENTIALS_TEXT = CATALOGUE.map((entry) => `${entry.name}: ${entry.credentials.map((f) => f.name).join(', ') || 'none'}`).join('; ');

const Name = Type.String({
  pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$',
  description: 'Unique among the connector accounts of the account and mode; routing rules name the account by it. Letters, digits, `_`, `.` and `-`, at most 64.',
  examples: ['stripe-eu'],
});

const CredentialValue = Type.String({ minLength: 1, maxLength: 4096 });
const CredentialKey = Type.String({ pattern: '^[\\s\\S]*$' });

const NewCredentials = Type.Record(CredentialKey, CredentialValue, {
  maxProperties: 20,
  description:
    `The processor's credentials, checked for shape and sealed at rest; never returned. Fields per connector (GET /v1/connectors has which are required): ${CREDENTIALS_TEXT}. ` +
    'Webhook secrets (webhook_secret, hmac_key) are optional here, since the processor issues them for webhook_url, which exists once the account does: set them with PATCH.',
});

export const CreateConnectorAccountBody = Type.Object(
  { connector: Type.String({ enum: CONNECTOR_NAMES, description: 'The processor, as GET /v1/connectors names it.' }), name: Name, credentials: Type.Optional(NewCredentials), metadata: Type.Optional(Metadata) },
  { additionalProperties: false },
);
export type CreateConnectorAccountBody = Static<typeof CreateConnectorAccountBody>;

export const UpdateConnectorAccountBody = Type.Object(
  {
    name: Type.Optional(Name),
    credentials: Type.Optional(
      Type.Record(CredentialKey, Type.Union([CredentialValue, Type.Null()]), {
        maxProperties: 20,
        description: 'Fields to set or rotate; the others are kept. null removes an optional field.',
      }),
    ),
    grace_period_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_GRACE_PERIOD_S,
        default: DEFAULT_GRACE_PERIOD_S,
        description: 'When the webhook secret changes: how long the previous one keeps verifying (default 24 hours, at most 7 days; 0 ends it at once).',
      }),
    ),
    status: Type.Optional(
      Type.String({ enum: [...CONNECTOR_ACCOUNT_STATUSES], description: 'disabled: routing sends it nothing new; what it already holds still settles.' }),
    ),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);
export type UpdateConnectorAccountBody = Static<typeof UpdateConnectorAccountBody>;

export const ListConnectorAccountsQuery = ListQuery({ connector: OneOf(CONNECTOR_NAMES), status: OneOf(CONNECTOR_ACCOUNT_STATUSES) });
export type ListConnectorAccountsQuery = Static<typeof ListConnectorAccountsQuery>;

const CredentialHint = Type.Object({ set: Type.Boolean(), last4: Type.Union([Type.String(), Type.Null()]) });

export const ConnectorAccount = Type.Object(
  {
    id: Type.String({ examples: ['ca_01jd8x3v0pe7wbz0m4k6f2n9qa'] }),
    object: Type.Literal('connector_account'),
    livemode: Type.Boolean(),
    connector: Type.String({ enum: CONNECTOR_NAMES }),
    name: Type.String(),
    status: Type.String({ enum: [...CONNECTOR_ACCOUNT_STATUSES] }),
    credentials: Type.Record(Type.String(), CredentialHint, {
      description: "Every credential field of the connector: whether it is set and its last four characters. The values themselves are never returned.",
    }),
    webhook_url: Type.String({
      description: "Where the processor reports outcomes (configure it at the processor). Built from PUBLIC_BASE_URL; the built-in simulators report to /v1/connectors/{name}/webhooks.",
    }),
    previous_webhook_secret_expires_at: Type.Union([Timestamp, Type.Null()], {
      description: 'After a webhook secret rotation: until when the previous secret still verifies.',
    }),
    metadata: MetadataView,
    ...Versioned('Increases by one with every change.'),
  },
  { $id: 'ConnectorAccount', title: 'ConnectorAccount' },
);
export type ConnectorAccountView = Static<typeof ConnectorAccount>;

export const DeletedConnectorAccount = Type.Object({
  id: Type.String(),
  object: Type.Literal('connector_account'),
  deleted: Type.Literal(true),
});

export const ConnectorSchema = Type.Object(
  {
    name: Type.String({ examples: ['stripe'] }),
    object: Type.Literal('connector'),
    modes: Type.Array(Type.String({ enum: ['test', 'live'] }), { description: 'The modes a connector account of it can be opened in.' }),
    capabilities: Type.Object({
      card_payments: Type.Boolean(),
      refunds: Type.Boolean(),
      manual_capture: Type.Boolean({ description: 'Authorise now, capture later (capture_method manual), and void an authorisation.' }),
      multiple_captures: Type.Boolean({ description: 'Several partial captures of one authorisation (final_capture false).' }),
      customer_actions: Type.Boolean({ description: 'The processor may ask for the customer (3-D Secure, a redirect).' }),
      card_verification: Type.Boolean({ description: 'Verifies a card to be saved without paying (POST /v1/payment-methods).' }),
      mandate_schemes: Type.Array(Type.String()),
      payouts: Type.Boolean(),
      currencies: Type.Array(Type.String(), { description: 'The currencies the service sends to it; the processor account may accept fewer.' }),
    }),
    credential_fields: Type.Array(
      Type.Object({
        name: Type.String(),
        required: Type.String({ enum: ['always', 'live', 'never'], description: 'live: required with a live key, refused with a test key.' }),
        description: Type.String(),
      }),
    ),
    routable: Type.Boolean({ description: 'Whether this version can send requests to it: routing rules may name its connector accounts.' }),
  },
  { $id: 'Connector', title: 'Connector' },
);
export type ConnectorView = Static<typeof ConnectorSchema>;

export const ConnectorCatalogue = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(Type.Ref('Connector')),
  has_more: Type.Literal(false),
});
