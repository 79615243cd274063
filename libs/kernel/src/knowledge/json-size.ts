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

/** UTF-8 length of a string (lone surrogates count as the 3-byte replacement character). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i += 1;
    } else bytes += 3;
  }
  return bytes;
}
