/**
 * Just enough of the tar format (POSIX ustar, with GNU and pax headers passed through) to join
 * the per-user parts of a checkpoint into one archive on the host, without extracting or
 * interpreting anything the cell wrote: each part is walked header by header (a header's size
 * says how many data blocks follow), its end-of-archive blocks are dropped, and the joined
 * members get one end of archive. Each seat's home is captured by that seat's own uid (no uid
 * in the cell reads every home), so a checkpoint is several `tar -cf` outputs.
 */

const BLOCK = 512;

export class TarballError extends Error {}

function isZeroBlock(bytes: Uint8Array, offset: number): boolean {
  for (let i = offset; i < offset + BLOCK; i += 1) if (bytes[i] !== 0) return false;
  return true;
}

/** The size field of a header: octal text, or GNU base-256 when its first byte has the high bit set. */
function sizeOf(header: Uint8Array): number {
  const field = header.subarray(124, 136);
  if (((field[0] ?? 0) & 0x80) !== 0) {
    let value = (field[0] ?? 0) & 0x7f;
    for (let i = 1; i < field.length; i += 1) value = value * 256 + (field[i] ?? 0);
    if (!Number.isSafeInteger(value)) throw new TarballError('a tar member is larger than this reader handles');
    return value;
  }
  const text = Buffer.from(field).toString('latin1').replace(/\0.*$/s, '').trim();
  if (!/^[0-7]*$/.test(text)) throw new TarballError(`a tar header has a size that is not octal: ${JSON.stringify(text)}`);
  return text === '' ? 0 : Number.parseInt(text, 8);
}

/**
 * Bytes of `archive` before its end of archive (its first all-zero header block): the members.
 * Throws TarballError when a member's data runs past the end, or no end of archive is found.
 */
export function tarMembersLength(archive: Uint8Array): number {
  let offset = 0;
  while (offset + BLOCK <= archive.length) {
    if (isZeroBlock(archive, offset)) return offset;
    const size = sizeOf(archive.subarray(offset, offset + BLOCK));
    const next = offset + BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (next > archive.length) throw new TarballError(`a tar member at byte ${offset} runs past the end of the archive`);
    offset = next;
  }
  throw new TarballError('the archive has no end-of-archive block');
}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

/**
 * A pax global header (typeflag `g`) holding one `comment` record: readers (GNU tar, busybox
 * tar) skip it; it makes the archive's bytes name what they are.
 */
export function paxGlobalComment(comment: string): Uint8Array {
  if (/[\n\0]/.test(comment)) throw new TarballError('a pax comment is one line without NUL bytes');
  const body = ` comment=${comment}\n`;
  // A record is "<length> <key>=<value>\n", its length counting its own digits.
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length) length += 1;
  const record = Buffer.from(`${length}${body}`, 'utf8');
  const header = Buffer.alloc(BLOCK);
  header.write('pax_global_header', 0, 'latin1');
  header.write(octal(0o644, 8), 100, 'latin1');
  header.write(octal(0, 8), 108, 'latin1');
  header.write(octal(0, 8), 116, 'latin1');
  header.write(octal(record.length, 12), 124, 'latin1');
  header.write(octal(0, 12), 136, 'latin1');
  header.write('g', 156, 'latin1');
  header.write('ustar\0', 257, 'latin1');
  header.write('00', 263, 'latin1');
  header.fill(' ', 148, 156);
  let checksum = 0;
  for (const byte of header) checksum += byte;
  header.write(`${checksum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  const data = Buffer.alloc(Math.ceil(record.length / BLOCK) * BLOCK);
  record.copy(data);
  return new Uint8Array(Buffer.concat([header, data]));
}

/** One archive of every part's members in order (after `prefix`, e.g. a pax global header), then one end of archive. */
export function joinTarballs(parts: readonly Uint8Array[], prefix: Uint8Array = new Uint8Array()): Uint8Array {
  const members = parts.map((part) => part.subarray(0, tarMembersLength(part)));
  return new Uint8Array(Buffer.concat([prefix, ...members, Buffer.alloc(2 * BLOCK)]));
}
