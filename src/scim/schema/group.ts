/**
 * The core Group schema (RFC 7643 section 4.2) plus the contract's own Group attributes:
 * `display` (another name for displayName), `value` (another name for id) and `active`.
 * Members are rows of `group_members`, never an array inside the stored document.
 */
import { attr, INDEXED_NAME_BOUNDS } from './types.ts';
import type { SchemaDef } from './types.ts';
import { GROUP_SCHEMA } from './urns.ts';

export const groupSchema: SchemaDef = {
  id: GROUP_SCHEMA,
  name: 'Group',
  description: 'Group',
  attributes: [
    attr('displayName', 'string', 'A human-readable name for the Group; unique within a team, case-insensitively.', {
      required: true,
      uniqueness: 'server',
      storage: { kind: 'column', column: 'display_name', lowerColumn: 'display_name_key' },
      ...INDEXED_NAME_BOUNDS,
    }),
    // readOnly in /Schemas so that schema-driven clients, which fill every writable attribute,
    // never send it beside displayName with another value; input under it is still accepted
    // (the contract creates groups with it), and displayName wins when both arrive (validate.ts,
    // patch.ts).
    attr('display', 'string', 'The contract\'s name for displayName: returned with the same value; accepted on input, where displayName wins when both are sent.', {
      aliasOf: 'displayName',
      mutability: 'readOnly',
      storage: { kind: 'column', column: 'display_name', lowerColumn: 'display_name_key' },
      ...INDEXED_NAME_BOUNDS,
    }),
    attr('value', 'string', 'The contract\'s copy of id.', {
      aliasOf: 'id',
      caseExact: true,
      mutability: 'readOnly',
      storage: { kind: 'id' },
    }),
    attr('active', 'boolean', 'Whether the group is active (the contract\'s attribute).', {
      storage: { kind: 'column', column: 'active' },
    }),
    attr('members', 'complex', 'The members of the Group.', {
      multiValued: true,
      storage: { kind: 'members' },
      subAttributes: [
        attr('value', 'string', 'The id of the member User.', { caseExact: true, mutability: 'immutable' }),
        attr('$ref', 'reference', 'The URI of the member.', {
          caseExact: true,
          mutability: 'immutable',
          referenceTypes: ['User'],
        }),
        attr('display', 'string', 'The member\'s userName.', { mutability: 'readOnly' }),
        attr('type', 'string', 'The type of the member.', {
          mutability: 'immutable',
          canonicalValues: ['User'],
        }),
      ],
    }),
  ],
};
