import { uniqueName } from '@writ/testing';

/**
 * A stream name and subject prefix no other test run on this server uses, and
 * a small byte limit: the server reserves each stream's max_bytes against its
 * JetStream storage, so test streams at the 10 GiB default would exhaust it.
 */
export function testStreamNames(): { stream: string; subjectPrefix: string; maxBytes: number } {
  const stream = uniqueName('WRIT_EVENTS_T');
  return { stream, subjectPrefix: `wt.${stream.toLowerCase()}`, maxBytes: 64 * 1024 * 1024 };
}
