import { describe, expect, it } from 'vitest';
import { compareReplicas, type ReplicaMessage, type ReplicaView } from './replica-agreement.js';

/** A stream's messages from `from`, each on its own subject with its own content. */
function log(from: number, subjects: readonly string[]): ReplicaMessage[] {
  return subjects.map((subject, index) => ({ seq: from + index, subject, digest: `d(${subject})` }));
}

const ORIGINAL = ['a', 'b', 'c', 'd', 'e', 'f'];

describe('compareReplicas', () => {
  it('given three peers holding the same messages, when compared, then none diverged', () => {
    const views: ReplicaView[] = ['n1', 'n2', 'n3'].map((peer) => ({ peer, messages: log(10, ORIGINAL) }));

    const agreement = compareReplicas(views, 10);

    expect(agreement).toEqual({ fromSeq: 10, toSeq: 15, peers: ['n1', 'n2', 'n3'], diverged: [] });
  });

  it('given a peer that kept a write no quorum accepted and dropped its later copy (every message after shifted), when compared, then that peer is named at the first position it differs', () => {
    // What nats-server 2.9.10 left on a partitioned stream leader: `x` stored at 12 on n2 alone, the quorum's 12 onwards one place later.
    const shifted: ReplicaMessage[] = [...log(10, ['a', 'b']), { seq: 12, subject: 'x', digest: 'd(x)' }, ...log(13, ['c', 'd', 'e'])];
    const views: ReplicaView[] = [
      { peer: 'n1', messages: log(10, ORIGINAL) },
      { peer: 'n2', messages: shifted },
      { peer: 'n3', messages: log(10, ORIGINAL) },
    ];

    const agreement = compareReplicas(views, 10);

    expect(agreement.diverged).toEqual([{ peer: 'n2', seq: 12, expected: { subject: 'c' }, found: { subject: 'x' } }]);
  });

  it('given the same subject with other content at one position, when compared, then the peer differs there', () => {
    const tampered = log(10, ORIGINAL).map((message) => (message.seq === 14 ? { ...message, digest: 'other' } : message));
    const views: ReplicaView[] = [
      { peer: 'n1', messages: tampered },
      { peer: 'n2', messages: log(10, ORIGINAL) },
      { peer: 'n3', messages: log(10, ORIGINAL) },
    ];

    expect(compareReplicas(views, 10).diverged).toEqual([{ peer: 'n1', seq: 14, expected: { subject: 'e' }, found: { subject: 'e' } }]);
  });

  it('given a peer missing a message the others hold inside the compared range, when compared, then it is named with nothing found', () => {
    const holed = log(10, ORIGINAL).filter((message) => message.seq !== 11);
    const views: ReplicaView[] = [
      { peer: 'n1', messages: log(10, ORIGINAL) },
      { peer: 'n2', messages: log(10, ORIGINAL) },
      { peer: 'n3', messages: holed },
    ];

    expect(compareReplicas(views, 10).diverged).toEqual([{ peer: 'n3', seq: 11, expected: { subject: 'b' }, found: null }]);
  });

  it('given peers read while the stream grew (a later read holds more), when compared, then only positions every read reached count and none diverged', () => {
    const views: ReplicaView[] = [
      { peer: 'n1', messages: log(10, ['a', 'b', 'c']) },
      { peer: 'n2', messages: log(10, ORIGINAL) },
      { peer: 'n3', messages: log(10, ['a', 'b', 'c', 'd']) },
    ];

    expect(compareReplicas(views, 10)).toMatchObject({ toSeq: 12, diverged: [] });
  });

  it('given two peers that differ (no majority), when compared, then the second is named against the first', () => {
    const views: ReplicaView[] = [
      { peer: 'n1', messages: log(10, ['a', 'b']) },
      { peer: 'n3', messages: log(10, ['a', 'z']) },
    ];

    expect(compareReplicas(views, 10).diverged).toEqual([{ peer: 'n3', seq: 11, expected: { subject: 'b' }, found: { subject: 'z' } }]);
  });
});
