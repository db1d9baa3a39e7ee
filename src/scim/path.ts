/**
 * The attribute path grammar of RFC 7644 section 3.10 (`[URI ":"] ATTRNAME ["." subAttr]`),
 * shared by filters, PATCH paths, sortBy and attributes= / excludedAttributes=. It only splits
 * text into an AttrPath; whether the names exist is the registry's business.
 */
import { badRequest } from './errors.ts';
import type { ScimType } from './errors.ts';
import type { AttrPath } from './filter/ast.ts';

/** ATTRNAME = ALPHA *(nameChar); `$ref` is the one name RFC 7643 allows with a `$`. */
const NAME = /^(?:[A-Za-z][A-Za-z0-9_-]*|\$ref)$/;

/** Longest attribute path accepted anywhere; real paths are far shorter. */
export const MAX_PATH_LENGTH = 512;

/**
 * Splits `text` into an AttrPath. A URN path keeps everything before the last ':' as `uri`
 * (`urn:...:enterprise:2.0:User:manager.value` -> uri, `manager`, `value`); the `.` inside
 * `2.0` is therefore never taken for a sub-attribute separator.
 */
export function parseAttrPath(text: string, scimType: ScimType): AttrPath {
  const fail = () => badRequest(scimType, `Invalid attribute path: "${text.slice(0, 100)}"`);
  if (text.length === 0 || text.length > MAX_PATH_LENGTH) throw fail();
  let uri: string | undefined;
  let rest = text;
  if (/^urn:/i.test(text)) {
    const colon = text.lastIndexOf(':');
    uri = text.slice(0, colon);
    rest = text.slice(colon + 1);
    if (!/^urn:[A-Za-z0-9][A-Za-z0-9-]*:[A-Za-z0-9()+,\-.:=@;$_!*'%/?#]+$/i.test(uri)) throw fail();
  }
  const parts = rest.split('.');
  if (parts.length > 2 || !parts.every((p) => NAME.test(p))) throw fail();
  const [attr, sub] = parts as [string, string | undefined];
  return Object.freeze({
    kind: 'attrPath' as const,
    ...(uri !== undefined ? { uri } : {}),
    attr,
    ...(sub !== undefined ? { sub } : {}),
  });
}

/** `attributes` / `excludedAttributes`: a comma-separated list of attribute paths. */
export function parseAttributeList(text: string): AttrPath[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => parseAttrPath(s, 'invalidValue'));
}
