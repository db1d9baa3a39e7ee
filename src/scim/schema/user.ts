/**
 * The core User schema (RFC 7643 sections 4.1 and 8.7.1) and the Enterprise User extension
 * (section 4.3), as data. Storage mappings name the indexed columns of `users`; everything else
 * lives in the resource's JSON document.
 */
import { attr, INDEXED_NAME_BOUNDS } from './types.ts';
import type { AttributeDef, SchemaDef } from './types.ts';
import { ENTERPRISE_USER_SCHEMA, USER_SCHEMA } from './urns.ts';

const typeValuePrimary = (
  what: string,
  types: readonly string[],
  extra: readonly AttributeDef[] = [],
  valueOptions: Partial<AttributeDef> = {},
  typeOptions: Partial<AttributeDef> = {},
): AttributeDef[] => [
  attr('value', 'string', `The ${what} value.`, valueOptions),
  attr('display', 'string', `A human-readable name for the ${what}, primarily for display.`),
  attr('type', 'string', `A label indicating the ${what}'s function.`, { canonicalValues: types, ...typeOptions }),
  attr('primary', 'boolean', `Whether this is the primary ${what}.`),
  ...extra,
];

export const userSchema: SchemaDef = {
  id: USER_SCHEMA,
  name: 'User',
  description: 'User Account',
  attributes: [
    attr('userName', 'string', 'Unique identifier for the User, used to sign in; case-insensitive.', {
      required: true,
      uniqueness: 'server',
      storage: { kind: 'column', column: 'user_name', lowerColumn: 'user_name_key' },
      ...INDEXED_NAME_BOUNDS,
    }),
    attr('name', 'complex', "The components of the user's real name.", {
      subAttributes: [
        attr('formatted', 'string', 'The full name, formatted for display.'),
        attr('familyName', 'string', 'The family name (last name).', {
          storage: { kind: 'column', column: 'family_name' },
        }),
        attr('givenName', 'string', 'The given name (first name).', {
          storage: { kind: 'column', column: 'given_name' },
        }),
        attr('middleName', 'string', 'The middle name(s).'),
        attr('honorificPrefix', 'string', 'The honorific prefix(es), e.g. "Ms.".'),
        attr('honorificSuffix', 'string', 'The honorific suffix(es), e.g. "III".'),
      ],
    }),
    attr('displayName', 'string', 'The name of the User, suitable for display.', {
      storage: { kind: 'column', column: 'display_name' },
      ...INDEXED_NAME_BOUNDS,
    }),
    attr('nickName', 'string', 'The casual way to address the user.'),
    attr('profileUrl', 'reference', "A URI pointing to the user's online profile.", {
      referenceTypes: ['external'],
    }),
    attr('title', 'string', "The user's title, such as \"Vice President\"."),
    attr('userType', 'string', 'The relationship between the organization and the user, e.g. "admin".', {
      storage: { kind: 'column', column: 'user_type' },
    }),
    attr('preferredLanguage', 'string', "The user's preferred written or spoken language (RFC 7231 Accept-Language form)."),
    attr('locale', 'string', "The user's default location for localization, e.g. \"en-US\"."),
    attr('timezone', 'string', 'The user\'s time zone in IANA form, e.g. "America/Los_Angeles".'),
    attr('active', 'boolean', "The user's administrative status: true = activated, false = deactivated.", {
      storage: { kind: 'column', column: 'active' },
    }),
    attr('password', 'string', "The user's cleartext password; write-only, never returned.", {
      mutability: 'writeOnly',
      returned: 'never',
      caseExact: true,
    }),
    attr('emails', 'complex', 'Email addresses for the user.', {
      multiValued: true,
      subAttributes: typeValuePrimary('email address', ['work', 'home', 'other']),
    }),
    attr('phoneNumbers', 'complex', 'Phone numbers for the user.', {
      multiValued: true,
      // The contract (DESIGN.md section 4): a phone number sent without a type is a work number.
      subAttributes: typeValuePrimary('phone number', ['work', 'home', 'mobile', 'fax', 'pager', 'other'], [], {}, { defaultValue: 'work' }),
    }),
    attr('ims', 'complex', 'Instant messaging addresses for the user.', {
      multiValued: true,
      subAttributes: typeValuePrimary('instant messaging address', [
        'aim', 'gtalk', 'icq', 'xmpp', 'msn', 'skype', 'qq', 'yahoo',
      ]),
    }),
    attr('photos', 'complex', 'URLs of images of the user.', {
      multiValued: true,
      subAttributes: typeValuePrimary('photo', ['photo', 'thumbnail'], [], {
        type: 'reference',
        referenceTypes: ['external'],
        caseExact: true,
      }),
    }),
    attr('addresses', 'complex', 'Physical mailing addresses for the user.', {
      multiValued: true,
      subAttributes: [
        attr('formatted', 'string', 'The full mailing address, formatted for display.'),
        attr('streetAddress', 'string', 'The full street address component.'),
        attr('locality', 'string', 'The city or locality component.'),
        attr('region', 'string', 'The state or region component.'),
        attr('postalCode', 'string', 'The zip code or postal code component.'),
        attr('country', 'string', 'The country name component (ISO 3166-1 alpha-2).'),
        attr('type', 'string', "A label indicating the address's function.", {
          canonicalValues: ['work', 'home', 'other'],
        }),
        attr('primary', 'boolean', 'Whether this is the primary address.'),
      ],
    }),
    attr('groups', 'complex', 'The groups the user belongs to; read-only, changed through Group resources.', {
      multiValued: true,
      mutability: 'readOnly',
      storage: { kind: 'groups' },
      subAttributes: [
        attr('value', 'string', 'The id of the group.', { mutability: 'readOnly', caseExact: true }),
        attr('$ref', 'reference', 'The URI of the group.', {
          mutability: 'readOnly',
          caseExact: true,
          referenceTypes: ['Group'],
        }),
        attr('display', 'string', 'The name of the group.', { mutability: 'readOnly' }),
        attr('type', 'string', 'How the membership was derived.', {
          mutability: 'readOnly',
          canonicalValues: ['direct', 'indirect'],
        }),
      ],
    }),
    attr('entitlements', 'complex', 'Entitlements of the user.', {
      multiValued: true,
      subAttributes: typeValuePrimary('entitlement', []),
    }),
    attr('roles', 'complex', 'Roles of the user.', {
      multiValued: true,
      subAttributes: typeValuePrimary('role', []),
    }),
    attr('x509Certificates', 'complex', 'X.509 certificates of the user.', {
      multiValued: true,
      subAttributes: typeValuePrimary('certificate', [], [], { type: 'binary', caseExact: true }),
    }),
  ],
};

export const enterpriseUserSchema: SchemaDef = {
  id: ENTERPRISE_USER_SCHEMA,
  name: 'EnterpriseUser',
  description: 'Enterprise User',
  attributes: [
    attr('employeeNumber', 'string', 'A string identifier of the user within the organization.'),
    attr('costCenter', 'string', 'The name of a cost center.'),
    attr('organization', 'string', 'The name of an organization.'),
    attr('division', 'string', 'The name of a division.'),
    attr('department', 'string', 'The name of a department.'),
    attr('manager', 'complex', "The user's manager.", {
      subAttributes: [
        attr('value', 'string', 'The id of the manager\'s User resource.', { caseExact: true }),
        attr('$ref', 'reference', 'The URI of the manager\'s User resource.', {
          caseExact: true,
          referenceTypes: ['User'],
        }),
        attr('displayName', 'string', 'The manager\'s display name.', { mutability: 'readOnly' }),
      ],
    }),
  ],
};
