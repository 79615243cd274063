import { CellError } from './cell-errors.js';

/**
 * Keeps the first `maxBytes` written to it and counts (then drops) the rest, so a
 * chatty process never blocks on a full pipe and never fills the executor's memory.
 */
export class CappedSink {
  readonly #maxBytes: number;
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  #seen = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  write(chunk: Buffer): void {
    this.#seen += chunk.length;
    const room = this.#maxBytes - this.#kept;
    if (room <= 0) return;
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    // Copy: the chunk may be a view into a larger buffer the stream reuses.
    this.#chunks.push(Buffer.from(part));
    this.#kept += part.length;
  }

  /** Bytes written in total, kept or not. */
  get seenBytes(): number {
    return this.#seen;
  }

  get truncated(): boolean {
    return this.#seen > this.#kept;
  }

  bytes(): Buffer {
    return Buffer.concat(this.#chunks, this.#kept);
  }
}

/** Where one demultiplexed stream goes. */
export interface ByteSink {
  write(chunk: Buffer): void;
}

const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const HEADER_BYTES = 8;

/**
 * Splits Docker's multiplexed attach stream (Tty false) into stdout and stderr:
 * frames of an 8-byte header `[type, 0, 0, 0, size (uint32 BE)]` and `size` bytes.
 * Iterative and allocation-light; a header with an unknown type means the stream is
 * not what we asked for, and is refused rather than guessed at.
 */
export class DockerStreamDemuxer {
  readonly #stdout: ByteSink;
  readonly #stderr: ByteSink;
  readonly #header = Buffer.alloc(HEADER_BYTES);
  #headerFill = 0;
  #frameType = -1;
  #frameLeft = 0;

  constructor(stdout: ByteSink, stderr: ByteSink) {
    this.#stdout = stdout;
    this.#stderr = stderr;
  }

  push(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.#frameLeft === 0) {
        const take = Math.min(HEADER_BYTES - this.#headerFill, chunk.length - offset);
        chunk.copy(this.#header, this.#headerFill, offset, offset + take);
        this.#headerFill += take;
        offset += take;
        if (this.#headerFill < HEADER_BYTES) return;
        this.#headerFill = 0;
        const type = this.#header.readUInt8(0);
        if (type !== STDIN && type !== STDOUT && type !== STDERR) {
          throw new CellError('CELL_EXEC_FAILED', `the exec stream is not a multiplexed stdout/stderr stream (frame type ${type})`, { details: { frame_type: type } });
        }
        this.#frameType = type;
        this.#frameLeft = this.#header.readUInt32BE(4);
        continue;
      }
      const take = Math.min(this.#frameLeft, chunk.length - offset);
      const part = chunk.subarray(offset, offset + take);
      if (this.#frameType === STDOUT) this.#stdout.write(part);
      else if (this.#frameType === STDERR) this.#stderr.write(part);
      this.#frameLeft -= take;
      offset += take;
    }
  }

  /** True when the stream ended between frames, as a well-formed stream does. */
  get atFrameBoundary(): boolean {
    return this.#frameLeft === 0 && this.#headerFill === 0;
  }
}
