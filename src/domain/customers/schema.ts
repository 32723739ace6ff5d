// Request and response schemas of customers: validation, handler types and OpenAPI at once.
import { Type, type Static } from 'typebox';
import { ListQuery, Metadata, MetadataView, Versioned, bodyExamples } from '../../kernel/schemas.js';

const Email = Type.String({ format: 'email', maxLength: 254 });
const Name = Type.String({ minLength: 1, maxLength: 256 });
const Reference = Type.String({
  minLength: 1,
  maxLength: 128,
  description: "The merchant's own id for the customer: unique per account and mode among customers not deleted (a clash is 422 reference_already_used).",
});

export const CreateCustomerBody = Type.Object(
  {
    email: Email,
    name: Type.Optional(Name),
    reference: Type.Optional(Reference),
    metadata: Type.Optional(Metadata),
  },
  {
    additionalProperties: false,
    ...bodyExamples({ customer: { summary: 'A customer with the shop’s own id', value: { email: 'jane@example.com', name: 'Jane Doe', reference: 'user-1042' } } }),
  },
);
export type CreateCustomerBody = Static<typeof CreateCustomerBody>;

export const UpdateCustomerBody = Type.Object(
  {
    email: Type.Optional(Email),
    name: Type.Optional(Type.Union([Name, Type.Null()], { description: 'null removes it.' })),
    reference: Type.Optional(Type.Union([Reference, Type.Null()], { description: 'null removes it.' })),
    metadata: Type.Optional({ ...Metadata, description: 'Replaces the whole metadata.' }),
  },
  { additionalProperties: false },
);
export type UpdateCustomerBody = Static<typeof UpdateCustomerBody>;

export const Customer = Type.Object(
  {
    id: Type.String({ examples: ['cus_01jd8x3v0pe7wbz0m4k6f2n9qa'] }),
    object: Type.Literal('customer'),
    livemode: Type.Boolean(),
    email: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    reference: Type.Union([Type.String(), Type.Null()]),
    metadata: MetadataView,
    ...Versioned(),
  },
  { $id: 'Customer', title: 'Customer' },
);
export type CustomerView = Static<typeof Customer>;

export const DeletedCustomer = Type.Object(
  { id: Type.String(), object: Type.Literal('customer'), deleted: Type.Literal(true) },
  { $id: 'DeletedCustomer', title: 'DeletedCustomer' },
);

export const ListCustomersQuery = ListQuery({
  email: Type.Optional(Type.String({ minLength: 1, maxLength: 254, description: 'Only customers with exactly this email.' })),
  reference: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
});
export type ListCustomersQuery = Static<typeof ListCustomersQuery>;
