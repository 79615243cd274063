/**
 * UTF-8 bytes of `value` as JSON. Key order does not change the length, so
 * this is the size of the canonical form too, computed without a codec.
 * Undefined when the value has no JSON form (a cycle, a bigint).
 */
export function jsonByteSize(value: unknown): number | undefined {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    return undefined;
  }
  return text === undefined ? undefined : utf8Length(text);
}

const UTF8 = new TextEncoder();

/** UTF-8 length of a string (a lone surrogate counts as the 3-byte replacement character, as the encoder writes it). */
export function utf8Length(text: string): number {
  return UTF8.encode(text).length;
}
