import { WritError, type EventDraft, type EventEnvelope } from '@writ/contracts';
import { sha256Hex } from '@writ/crypto';
import type { ArchivePurgeOutcome, CellHostPort, CellLog, CheckpointRecord, CheckpointStore, RestoreOptions } from '../src/application/ports.js';
import type { CellUser } from '../src/outbound/cells/index.js';

/**
 * In-memory stand-ins for the cell lifecycle's ports, for unit tests of its logic (the
 * real ones are exercised against NATS and Docker in src/cells.int.spec.ts). The log keeps
 * the event store's contract: append only at the expected seq (else EVENTSTORE_CONFLICT),
 * and an event id it already holds is reported as a duplicate.
 */
export class MemoryCellLog implements CellLog {
  readonly streams = new Map<string, EventEnvelope[]>();

  async read(cellId: string): Promise<readonly EventEnvelope[]> {
    return [...(this.streams.get(cellId) ?? [])];
  }

  async head(cellId: string): Promise<number> {
    return this.streams.get(cellId)?.length ?? 0;
  }

  async append(cellId: string, drafts: readonly EventDraft[], expectedSeq: number): Promise<{ head: number; duplicate: boolean }> {
    const stream = this.streams.get(cellId) ?? [];
    if (drafts[0] !== undefined && stream.some((event) => event.event_id === drafts[0]?.event_id)) return { head: stream.length, duplicate: true };
    if (stream.length !== expectedSeq) {
      throw new WritError('EVENTSTORE_CONFLICT', `cell ${cellId} is at ${stream.length}, not ${expectedSeq}`);
    }
    for (const draft of drafts) {
      stream.push({ ...draft, task_id: cellId, task_seq: stream.length + 1, prev_event_hash: null, hash: sha256Hex(draft.event_id) } as EventEnvelope);
    }
    this.streams.set(cellId, stream);
    return { head: stream.length, duplicate: false };
  }

  async list(): Promise<readonly string[]> {
    return [...this.streams.keys()];
  }

  types(cellId: string): string[] {
    return (this.streams.get(cellId) ?? []).map((event) => event.event_type);
  }
}

/** A host that records what it was asked to do, in order. */
export class MemoryCellHost implements CellHostPort {
  readonly calls: string[] = [];
  readonly held = new Set<string>();
  readonly metadata = new Map<string, Record<string, unknown>>();
  readonly records: CheckpointRecord[] = [];
  readonly restores: { cellId: string; sha256: string; options: RestoreOptions }[] = [];
  readonly spawnLog: Record<string, unknown>[] = [];
  readonly decisions: Record<string, unknown>[] = [];
  readonly scrubbing = new Set<string>();
  /** `<cell>/<participant>` → the user its home was given. */
  readonly homeOwners = new Map<string, CellUser>();
  /** What the next capture returns. */
  tarball = new TextEncoder().encode('tarball-1');

  async holds(cellId: string): Promise<boolean> {
    return this.held.has(cellId);
  }
  async localCells(): Promise<readonly string[]> {
    return [...new Set([...this.held, ...this.scrubbing])];
  }
  async incarnation(cellId: string): Promise<number | null> {
    const seq = this.metadata.get(cellId)?.['spawn_seq'];
    return typeof seq === 'number' ? seq : null;
  }
  async open(cellId: string): Promise<void> {
    this.calls.push(`open ${cellId}`);
  }
  async stop(cellId: string): Promise<boolean> {
    this.calls.push(`stop ${cellId}`);
    return true;
  }
  async ensureHome(cellId: string, participantId: string, owner: CellUser): Promise<void> {
    this.calls.push(`home ${cellId}/${participantId}`);
    this.homeOwners.set(`${cellId}/${participantId}`, owner);
  }
  async removeHome(cellId: string, participantId: string): Promise<void> {
    this.calls.push(`remove-home ${cellId}/${participantId}`);
  }
  async writeMetadata(cellId: string, metadata: Readonly<Record<string, unknown>>): Promise<void> {
    this.held.add(cellId);
    this.metadata.set(cellId, { ...metadata });
  }
  async appendSpawnLog(_cellId: string, entry: Readonly<Record<string, unknown>>): Promise<void> {
    this.spawnLog.push({ ...entry });
  }
  async appendDecision(_cellId: string, entry: Readonly<Record<string, unknown>>): Promise<void> {
    this.decisions.push({ ...entry });
  }
  async writeCheckpointRecord(_cellId: string, record: CheckpointRecord): Promise<void> {
    this.records.push(record);
  }
  async captureCheckpoint(cellId: string): Promise<Uint8Array> {
    this.calls.push(`capture ${cellId}`);
    return this.tarball;
  }
  async restoreCheckpoint(cellId: string, tarball: Uint8Array, options: RestoreOptions): Promise<void> {
    this.calls.push(`restore ${cellId}`);
    this.restores.push({ cellId, sha256: sha256Hex(tarball), options });
  }
  async markScrubbing(cellId: string): Promise<void> {
    this.calls.push(`mark-scrubbing ${cellId}`);
    this.scrubbing.add(cellId);
  }
  async clearScrubbing(cellId: string): Promise<void> {
    this.calls.push(`clear-scrubbing ${cellId}`);
    this.scrubbing.delete(cellId);
  }
  async scrub(cellId: string): Promise<void> {
    this.calls.push(`scrub ${cellId}`);
    this.held.delete(cellId);
    this.metadata.delete(cellId);
  }
}

/** Content-addressed bytes in memory, with the owner note of whoever's put created each object. */
export class MemoryCheckpointStore implements CheckpointStore {
  readonly objects = new Map<string, Uint8Array>();
  readonly owners = new Map<string, string | undefined>();
  readonly deletes: string[] = [];

  async put(bytes: Uint8Array, owner?: string) {
    const sha256 = sha256Hex(bytes);
    if (!this.objects.has(sha256)) {
      this.objects.set(sha256, bytes);
      this.owners.set(sha256, owner);
    }
    return { sha256, uri: `nats-obj://TEST/sha256-${sha256}`, byte_size: bytes.length };
  }

  async get(sha256: string): Promise<Uint8Array | null> {
    return this.objects.get(sha256) ?? null;
  }

  async deleteOwned(sha256: string, owner: string): Promise<ArchivePurgeOutcome> {
    if (!this.objects.has(sha256)) return 'absent';
    if (this.owners.get(sha256) !== owner) return 'kept';
    this.objects.delete(sha256);
    this.owners.delete(sha256);
    this.deletes.push(sha256);
    return 'deleted';
  }
}
