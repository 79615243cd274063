/** RFC 6901 JSON Pointers: how a bundle names a place inside an event. */

/** One reference token, escaped (`~` → `~0`, `/` → `~1`). */
export function pointerToken(key: string | number): string {
  return String(key).replaceAll('~', '~0').replaceAll('/', '~1');
}

/** The pointer of `parent`'s child `key`. */
export function childPointer(parent: string, key: string | number): string {
  return `${parent}/${pointerToken(key)}`;
}

/** Where a node of a JSON tree sits: its pointer and the object key it is under (for an array element: the array's key). */
export interface NodePlace {
  readonly pointer: string;
  readonly key: string | undefined;
  readonly inArray: boolean;
}

/**
 * Visits every node of a JSON value depth first: the node, then its children,
 * object members in sorted key order, so that every walk of the same value
 * visits the same nodes in the same order.
 */
export function walkJson(value: unknown, visit: (node: unknown, place: NodePlace) => void, place: NodePlace = { pointer: '', key: undefined, inArray: false }): void {
  visit(value, place);
  if (Array.isArray(value)) {
    value.forEach((item, index) => walkJson(item, visit, { pointer: childPointer(place.pointer, index), key: place.key, inArray: true }));
  } else if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record).sort()) walkJson(record[key], visit, { pointer: childPointer(place.pointer, key), key, inArray: false });
  }
}

/** The value `pointer` names inside `root`, or undefined when it names nothing. */
export function valueAt(root: unknown, pointer: string): unknown {
  if (pointer === '') return root;
  let node: unknown = root;
  for (const token of pointer.slice(1).split('/')) {
    const key = token.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(node) && /^(0|[1-9]\d*)$/.test(key)) node = node[Number(key)];
    else if (typeof node === 'object' && node !== null && !Array.isArray(node) && Object.hasOwn(node, key)) node = (node as Record<string, unknown>)[key];
    else return undefined;
  }
  return node;
}
