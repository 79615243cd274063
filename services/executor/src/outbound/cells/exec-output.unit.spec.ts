import { describe, expect, it } from 'vitest';
import { CappedSink, DockerStreamDemuxer } from './exec-output.js';

function frame(type: number, text: string): Buffer {
  const body = Buffer.from(text);
  const header = Buffer.alloc(8);
  header.writeUInt8(type, 0);
  header.writeUInt32BE(body.length, 4);
  return Buffer.concat([header, body]);
}

describe('DockerStreamDemuxer', () => {
  it('given frames split at every byte, when pushed, then stdout and stderr come out whole and apart', () => {
    const out = new CappedSink(1024);
    const err = new CappedSink(1024);
    const demuxer = new DockerStreamDemuxer(out, err);
    const wire = Buffer.concat([frame(1, 'hello '), frame(2, 'oops'), frame(1, 'world'), frame(1, '')]);
    for (let i = 0; i < wire.length; i += 1) demuxer.push(wire.subarray(i, i + 1));
    expect(out.bytes().toString()).toBe('hello world');
    expect(err.bytes().toString()).toBe('oops');
    expect(demuxer.atFrameBoundary).toBe(true);
  });

  it('given a stream cut inside a frame, when checked, then it is not at a frame boundary', () => {
    const demuxer = new DockerStreamDemuxer(new CappedSink(10), new CappedSink(10));
    demuxer.push(frame(1, 'hello').subarray(0, 10));
    expect(demuxer.atFrameBoundary).toBe(false);
  });

  it('given a header of an unknown type, when pushed, then CELL_EXEC_FAILED', () => {
    const demuxer = new DockerStreamDemuxer(new CappedSink(10), new CappedSink(10));
    expect(() => demuxer.push(Buffer.from('HTTP/1.1 200 OK\r\n'))).toThrow(expect.objectContaining({ code: 'CELL_EXEC_FAILED' }));
  });
});

describe('CappedSink', () => {
  it('given more than the cap, when written, then the first bytes are kept and the rest counted', () => {
    const sink = new CappedSink(5);
    sink.write(Buffer.from('abc'));
    sink.write(Buffer.from('defgh'));
    sink.write(Buffer.from('ij'));
    expect(sink.bytes().toString()).toBe('abcde');
    expect(sink.truncated).toBe(true);
    expect(sink.seenBytes).toBe(10);
  });

  it('given exactly the cap, when written, then nothing is truncated', () => {
    const sink = new CappedSink(3);
    sink.write(Buffer.from('abc'));
    expect(sink.truncated).toBe(false);
  });
});
