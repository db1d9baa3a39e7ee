/**
 * The common attributes of every resource (RFC 7643 section 3.1): id, externalId, meta. They are
 * resolved like schema attributes but, as the RFC says, are not listed inside any schema's
 * `attributes` in /Schemas.
 */
import { attr, INDEXED_NAME_BOUNDS } from './types.ts';
import type { AttributeDef } from './types.ts';

export const commonAttributes: readonly AttributeDef[] = [
  attr('id', 'string', 'Unique identifier for the resource, assigned by the service provider.', {
    caseExact: true,
    mutability: 'readOnly',
    returned: 'always',
    uniqueness: 'server',
    storage: { kind: 'id' },
  }),
  attr('externalId', 'string', 'Identifier of the resource as defined by the provisioning client.', {
    caseExact: true,
    storage: { kind: 'column', column: 'external_id' },
    ...INDEXED_NAME_BOUNDS,
  }),
  attr('meta', 'complex', 'Resource metadata.', {
    mutability: 'readOnly',
    subAttributes: [
      attr('resourceType', 'string', 'Name of the resource type.', {
        caseExact: true,
        mutability: 'readOnly',
      }),
      attr('created', 'dateTime', 'When the resource was added to the service provider.', {
        mutability: 'readOnly',
        storage: { kind: 'meta', column: 'created_at' },
      }),
      attr('lastModified', 'dateTime', 'When the resource was last modified.', {
        mutability: 'readOnly',
        storage: { kind: 'meta', column: 'updated_at' },
      }),
      attr('location', 'reference', 'URI of the resource.', {
        caseExact: true,
        mutability: 'readOnly',
        referenceTypes: ['uri'],
      }),
      attr('version', 'string', 'Version (weak entity tag) of the resource.', {
        caseExact: true,
        mutability: 'readOnly',
      }),
    ],
  }),
];
