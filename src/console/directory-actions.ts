/**
 * What an admin changes in the directory from the console (issue 30 item 2): create, edit,
 * deactivate and reactivate a user, add and remove a group's members. Each change is one call of
 * the SCIM services (scim/users.ts, scim/groups.ts), so it is validated, audited and evented as
 * the same change sent by an identity provider, and refused by the same rules with the same
 * ScimError (its message is what the page shows). The admin is the actor (`via: 'console'`).
 * Here the form's fields become a SCIM body or PATCH operations; no SQL and no HTML.
 */
import { typesOf } from '../scim/context.ts';
import type { ScimContext } from '../scim/context.ts';
import { patchGroup } from '../scim/groups.ts';
import type { Resource } from '../scim/representation.ts';
import type { AttributeDef, ResourceTypeDef } from '../scim/schema/types.ts';
import { PATCH_OP, USER_SCHEMA } from '../scim/schema/urns.ts';
import { activateUser, createUser, patchUser } from '../scim/users.ts';
import { ConsoleInputError } from './directory.ts';

/** A field of the user form that edits one value of an extension: `<schema urn>:<attribute>`. */
export interface ExtensionField {
  readonly name: string;
  readonly schemaId: string;
  readonly schemaName: string;
  readonly attribute: AttributeDef;
}

/**
 * The extension attributes the form edits: single-valued, not complex, writable (the team's
 * extensions and the built-in enterprise one, in the order the resource type lists them).
 * Multi-valued and complex ones are shown on the user page and changed through SCIM.
 */
export function extensionFields(rt: ResourceTypeDef): ExtensionField[] {
  return rt.extensions.flatMap(({ schema }) =>
    schema.attributes
      .filter((a) => !a.multiValued && a.type !== 'complex' && a.type !== 'binary' && (a.mutability === 'readWrite' || a.mutability === 'immutable'))
      .map((attribute) => ({ name: `${schema.id}:${attribute.name}`, schemaId: schema.id, schemaName: schema.name || schema.id, attribute })),
  );
}

/** The user form's values, as typed (every field a string; '' for empty). */
export interface UserForm {
  readonly userName: string;
  readonly givenName: string;
  readonly familyName: string;
  readonly displayName: string;
  readonly title: string;
  readonly email: string;
  readonly phone: string;
  /** By ExtensionField.name. */
  readonly extensions: Readonly<Record<string, string>>;
}

const text = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '');
const record = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** The element of a multi-valued attribute the form edits: the primary one, else the first. */
function editedElement(value: unknown): Record<string, unknown> | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const elements = value.map(record);
  return elements.find((e) => e.primary === true) ?? elements[0];
}

/** The form as a user's stored values fill it (the edit page). */
export function formOf(rt: ResourceTypeDef, resource: Resource): UserForm {
  const name = record(resource.name);
  const extensions: Record<string, string> = {};
  for (const f of extensionFields(rt)) extensions[f.name] = text(record(resource[f.schemaId])[f.attribute.name]);
  return {
    userName: text(resource.userName),
    givenName: text(name.givenName),
    familyName: text(name.familyName),
    displayName: text(resource.displayName),
    title: text(resource.title),
    email: text(editedElement(resource.emails)?.value),
    phone: text(editedElement(resource.phoneNumbers)?.value),
    extensions,
  };
}

/** The form as posted (`body` the parsed form), unknown fields ignored. */
export function formFrom(rt: ResourceTypeDef, body: (name: string) => string): UserForm {
  const extensions: Record<string, string> = {};
  for (const f of extensionFields(rt)) extensions[f.name] = body(f.name).trim();
  return {
    userName: body('userName').trim(),
    givenName: body('givenName').trim(),
    familyName: body('familyName').trim(),
    displayName: body('displayName').trim(),
    title: body('title').trim(),
    email: body('email').trim(),
    phone: body('phone').trim(),
    extensions,
  };
}

/**
 * A typed form value as SCIM takes it: a boolean or a number when the attribute is one and the
 * text reads as one; otherwise the text itself, which the SCIM validation refuses with its own
 * message when it does not fit.
 */
function typed(a: AttributeDef, value: string): unknown {
  if (a.type === 'boolean' && /^(true|false)$/.test(value)) return value === 'true';
  if ((a.type === 'integer' || a.type === 'decimal') && /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(value)) return Number(value);
  return value;
}

/** Creates a user from the form; answers its id. */
export async function createUserFrom(ctx: ScimContext, form: UserForm): Promise<string> {
  const rt = typesOf(ctx).User;
  const body: Record<string, unknown> = { schemas: [USER_SCHEMA], userName: form.userName };
  const name = { ...(form.givenName ? { givenName: form.givenName } : {}), ...(form.familyName ? { familyName: form.familyName } : {}) };
  if (Object.keys(name).length > 0) body.name = name;
  if (form.displayName) body.displayName = form.displayName;
  if (form.title) body.title = form.title;
  if (form.email) body.emails = [{ value: form.email, type: 'work', primary: true }];
  if (form.phone) body.phoneNumbers = [{ value: form.phone, type: 'work' }];
  for (const f of extensionFields(rt)) {
    const value = form.extensions[f.name] ?? '';
    if (value === '') continue;
    const part = record(body[f.schemaId]);
    body[f.schemaId] = { ...part, [f.attribute.name]: typed(f.attribute, value) };
    if (!(body.schemas as string[]).includes(f.schemaId)) (body.schemas as string[]).push(f.schemaId);
  }
  const created = await createUser(ctx, body);
  return created.id;
}

type Operation = { op: 'add' | 'replace' | 'remove'; path: string; value?: unknown };

/** The operations that take one single value from `before` to `after` ('' for none). */
const scalarOps = (path: string, before: string, after: string, value: unknown = after): Operation[] =>
  before === after ? [] : after === '' ? [{ op: 'remove', path }] : [{ op: 'replace', path, value }];

/** The operations that change the edited element (editedElement) of a multi-valued attribute. */
function elementOps(attribute: string, stored: unknown, after: string, type: string): Operation[] {
  const element = editedElement(stored);
  const before = text(element?.value);
  if (before === after) return [];
  if (element === undefined) return [{ op: 'add', path: attribute, value: [{ value: after, type, ...(attribute === 'emails' ? { primary: true } : {}) }] }];
  const selector = `${attribute}[value eq ${JSON.stringify(before)}]`;
  return after === '' ? [{ op: 'remove', path: selector }] : [{ op: 'replace', path: `${selector}.value`, value: after }];
}

/** Saves the form's changes to the user as PATCH operations; answers how many values changed. */
export async function updateUserFrom(ctx: ScimContext, id: string, current: Resource, form: UserForm): Promise<number> {
  const rt = typesOf(ctx).User;
  const was = formOf(rt, current);
  const ops: Operation[] = [
    ...scalarOps('userName', was.userName, form.userName),
    ...scalarOps('name.givenName', was.givenName, form.givenName),
    ...scalarOps('name.familyName', was.familyName, form.familyName),
    ...scalarOps('displayName', was.displayName, form.displayName),
    ...scalarOps('title', was.title, form.title),
    ...elementOps('emails', current.emails, form.email, 'work'),
    ...elementOps('phoneNumbers', current.phoneNumbers, form.phone, 'work'),
  ];
  for (const f of extensionFields(rt)) {
    const after = form.extensions[f.name] ?? '';
    ops.push(...scalarOps(f.name, was.extensions[f.name] ?? '', after, typed(f.attribute, after)));
  }
  if (ops.length === 0) return 0;
  await patchUser(ctx, id, { schemas: [PATCH_OP], Operations: ops });
  return ops.length;
}

/**
 * Deactivates the user as an identity provider does (PATCH `active: false`): in a team that hides
 * deactivated users it leaves every SCIM read; in one that shows them it reads `active: false`.
 * An admin cannot deactivate themselves from the console (they would lose it mid-session).
 */
export async function deactivateUser(ctx: ScimContext, id: string, selfId: string): Promise<void> {
  if (id === selfId) throw new ConsoleInputError('You cannot deactivate yourself. Ask another admin of the team.');
  await patchUser(ctx, id, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'active', value: false }] });
}

/** Reactivates the user (SCIM activate): refused with 409 while an active user holds its userName. */
export async function reactivateUser(ctx: ScimContext, id: string): Promise<void> {
  await activateUser(ctx, id);
}

/** Adds one user to the group's members (nothing changes when it is one already). */
export async function addMember(ctx: ScimContext, groupId: string, userId: string): Promise<void> {
  if (!/^[A-Za-z0-9]{1,40}$/.test(userId)) throw new ConsoleInputError('Choose a user to add.');
  await patchGroup(ctx, groupId, { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value: userId }] }] });
}

/** Removes one user from the group's members. */
export async function removeMember(ctx: ScimContext, groupId: string, userId: string): Promise<void> {
  await patchGroup(ctx, groupId, { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: `members[value eq ${JSON.stringify(userId)}]` }] });
}
