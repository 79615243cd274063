import type { ResolvedSecret } from './secret-source.js';

/** What a secret's value is replaced by wherever it would leave the cell. */
export function redactionMark(handle: string): string {
  return `[redacted:${handle}]`;
}

/** Shorter values are still redacted, but a cut-off tail is only recognized from this many bytes on. */
const MIN_TAIL = 4;

/**
 * Replaces every occurrence of each secret's value in `bytes` by `[redacted:<handle>]`
 * (longest values first, so a secret containing another is removed whole). When the
 * capture was cut (`truncated`), a tail that is the start of a value is redacted too:
 * the cap must not leave the first half of a credential in an artifact.
 */
export function redactBytes(bytes: Buffer, secrets: readonly ResolvedSecret[], truncated = false): Buffer {
  if (secrets.length === 0 || bytes.length === 0) return bytes;
  let out = bytes;
  const ordered = [...secrets].sort((a, b) => Buffer.byteLength(b.value) - Buffer.byteLength(a.value));
  for (const secret of ordered) {
    const needle = Buffer.from(secret.value, 'utf8');
    const mark = Buffer.from(redactionMark(secret.handle), 'utf8');
    const parts: Buffer[] = [];
    let from = 0;
    for (let at = out.indexOf(needle, from); at >= 0; at = out.indexOf(needle, from)) {
      parts.push(out.subarray(from, at), mark);
      from = at + needle.length;
    }
    if (parts.length > 0) out = Buffer.concat([...parts, out.subarray(from)]);
  }
  if (truncated) {
    for (const secret of ordered) {
      const needle = Buffer.from(secret.value, 'utf8');
      for (let len = Math.min(needle.length - 1, out.length); len >= Math.min(MIN_TAIL, needle.length - 1) && len > 0; len -= 1) {
        if (out.subarray(out.length - len).equals(needle.subarray(0, len))) {
          out = Buffer.concat([out.subarray(0, out.length - len), Buffer.from(redactionMark(secret.handle), 'utf8')]);
          break;
        }
      }
    }
  }
  return out;
}

/** The same for text (error messages). */
export function redactText(text: string, secrets: readonly ResolvedSecret[]): string {
  let out = text;
  for (const secret of [...secrets].sort((a, b) => b.value.length - a.value.length)) out = out.split(secret.value).join(redactionMark(secret.handle));
  return out;
}
