import type { BundleReference, BundleReferenceBinding, BundleReferenceField } from '@writ/contracts';
import { canonicalJson, sha256Hex } from '@writ/crypto';
import { approvalPacketDocument } from '@writ/runtime';
import { walkJson } from './json-pointer.js';

/**
 * Where each reference of a receipt resolves in a task's event segment, by
 * one deterministic rule shared by `writ export` (which writes the result
 * into the bundle) and `writ verify` (which recomputes it from the bundle's
 * events and requires the same list): a bundle can neither leave a reference
 * out nor point it anywhere the segment does not support.
 */


/** An event as far as resolution reads it: its id, task, type and payload (raw JSON: nothing is dropped). */
export interface SegmentEvent {
  readonly event_id: string;
  readonly event_type: string;
  readonly task_id: string;
  readonly hash: string;
  readonly payload: Readonly<Record<string, unknown>>;
}

/** One reference as a receipt spells it. */
export interface ReceiptRef {
  readonly field: BundleReferenceField;
  readonly ref: string;
}

export interface UnresolvedRef extends ReceiptRef {
  readonly why: string;
}

export interface ReferenceResolution {
  readonly references: BundleReference[];
  readonly unresolved: UnresolvedRef[];
}

interface Location {
  readonly index: number;
  readonly pointer: string;
  readonly binding: BundleReferenceBinding;
  readonly sha256: string;
}

const HEX = /^[0-9a-f]{64}$/;
const SHA256_REF = /^sha256:([0-9a-f]{64})$/;
const PACKET_REF = /^artifact:sha256:([0-9a-f]{64})$/;
const OBJECT_REF = /^(action_request|policy_result|decision|approval|grant|artifact|receipt):(.+)$/;
/** Keys under which the log records a digest of bytes kept elsewhere (stdout, stderr, an artifact's content). */
const DIGEST_KEY = /(?:^|_)sha256$|^content_hash$/;
/** Fields whose value is a bare hex digest rather than a `sha256:` ref. */
const HASH_FIELDS: ReadonlySet<BundleReferenceField> = new Set([
  'request_hash',
  'policy_result_hash',
  'approval_resolution.resolution_hash',
  'grant_hash',
  'rollback.steps.expected_sha256',
  'rollback.steps.restore_sha256',
]);

/** Objects a `<kind>:<id>` ref can name: the member key they are recorded under and their id field. */
const OBJECT_KINDS: readonly { readonly kind: string; readonly keys: readonly string[]; readonly idKey: string; readonly inArray: boolean }[] = [
  { kind: 'action_request', keys: ['action_request', 'rewritten_action_request'], idKey: 'action_request_id', inArray: false },
  { kind: 'policy_result', keys: ['policy_result'], idKey: 'policy_result_id', inArray: false },
  { kind: 'decision', keys: ['decision'], idKey: 'decision_id', inArray: false },
  { kind: 'grant', keys: ['claims'], idKey: 'jti', inArray: false },
  { kind: 'artifact', keys: ['artifacts'], idKey: 'artifact_id', inArray: true },
  { kind: 'artifact', keys: ['artifact'], idKey: 'artifact_id', inArray: false },
  // A rollback's receipt names the receipt it rolls back: an earlier `receipt.issued` of the task.
  { kind: 'receipt', keys: ['receipt'], idKey: 'receipt_id', inArray: false },
];

/** Every reference a receipt makes, in field order (the order of `BundledReceipt.references`). */
export function receiptRefs(receipt: Readonly<Record<string, unknown>>): ReceiptRef[] {
  const refs: ReceiptRef[] = [];
  const add = (field: BundleReferenceField, value: unknown): void => {
    if (typeof value === 'string' && value !== '') refs.push({ field, ref: value });
  };
  const list = (field: BundleReferenceField, values: unknown): void => {
    if (Array.isArray(values)) for (const value of values) add(field, value);
  };
  const resolution = (typeof receipt['approval_resolution'] === 'object' && receipt['approval_resolution'] !== null ? receipt['approval_resolution'] : {}) as Record<string, unknown>;
  add('action_request_ref', receipt['action_request_ref']);
  add('request_hash', receipt['request_hash']);
  list('input_refs', receipt['input_refs']);
  add('environment_ref', receipt['environment_ref']);
  add('policy_result_ref', receipt['policy_result_ref']);
  add('policy_result_hash', receipt['policy_result_hash']);
  add('approval_ref', receipt['approval_ref']);
  add('approval_resolution.resolution_ref', resolution['resolution_ref']);
  add('approval_resolution.resolution_hash', resolution['resolution_hash']);
  add('approval_resolution.packet_ref', resolution['packet_ref']);
  add('state_witness_ref', receipt['state_witness_ref']);
  add('capability_grant_ref', receipt['capability_grant_ref']);
  add('grant_hash', receipt['grant_hash']);
  list('output_refs', receipt['output_refs']);
  add('decision_ref', receipt['decision_ref']);
  add('rollback_ref', receipt['rollback_ref']);
  const rollback = (typeof receipt['rollback'] === 'object' && receipt['rollback'] !== null ? receipt['rollback'] : {}) as Record<string, unknown>;
  const steps = Array.isArray(rollback['steps']) ? (rollback['steps'] as unknown[]) : [];
  for (const step of steps) {
    const fields = (typeof step === 'object' && step !== null ? step : {}) as Record<string, unknown>;
    add('rollback.steps.expected_sha256', fields['expected_sha256']);
    add('rollback.steps.restore_artifact_ref', fields['restore_artifact_ref']);
    add('rollback.steps.restore_sha256', fields['restore_sha256']);
  }
  return refs;
}

function contentHash(value: unknown): string | undefined {
  try {
    return sha256Hex(canonicalJson(value));
  } catch {
    return undefined;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The segment, indexed once: for every id, content hash, recorded digest,
 * approval packet and state witness, the first place (in log order, then walk
 * order) that supports it. First wins, so a later copy never changes an answer.
 */
export class SegmentIndex {
  readonly #events: readonly SegmentEvent[];
  readonly #byEventId = new Map<string, number>();
  readonly #objects = new Map<string, Location>();
  readonly #hashes = new Map<string, Location>();
  readonly #packets = new Map<string, Location>();
  readonly #witnesses = new Map<string, Location>();

  constructor(events: readonly SegmentEvent[]) {
    this.#events = events;
    events.forEach((event, index) => this.#add(event, index));
  }

  #first(map: Map<string, Location>, key: string, location: Location): void {
    if (!map.has(key)) map.set(key, location);
  }

  #add(event: SegmentEvent, index: number): void {
    if (!this.#byEventId.has(event.event_id)) this.#byEventId.set(event.event_id, index);
    const payload = event.payload;
    if (event.event_type === 'approval.requested' && isRecord(payload)) this.#addApproval(event, payload, index);
    walkJson(payload, (node, place) => {
      const pointer = `/payload${place.pointer}`;
      if (typeof node === 'object' && node !== null) {
        const hash = contentHash(node);
        if (hash === undefined) return;
        this.#first(this.#hashes, hash, { index, pointer, binding: 'content', sha256: hash });
        if (isRecord(node)) {
          for (const kind of OBJECT_KINDS) {
            const id = node[kind.idKey];
            if (typeof id === 'string' && place.key !== undefined && kind.keys.includes(place.key) && kind.inArray === place.inArray) {
              this.#first(this.#objects, `${kind.kind}:${id}`, { index, pointer, binding: 'object', sha256: hash });
            }
          }
        }
      } else if (typeof node === 'string' && place.key !== undefined && !place.inArray) {
        if (place.key === 'jws') this.#first(this.#hashes, sha256Hex(node), { index, pointer, binding: 'text', sha256: sha256Hex(node) });
        else if (DIGEST_KEY.test(place.key) && HEX.test(node)) this.#first(this.#hashes, node, { index, pointer, binding: 'recorded_digest', sha256: node });
      }
    });
  }

  #addApproval(event: SegmentEvent, payload: Record<string, unknown>, index: number): void {
    const approvalId = payload['approval_id'];
    const hash = contentHash(payload);
    if (typeof approvalId === 'string' && hash !== undefined) this.#first(this.#objects, `approval:${approvalId}`, { index, pointer: '/payload', binding: 'object', sha256: hash });
    const witness = payload['state_witness'];
    if (isRecord(witness)) {
      // services/approval `stateWitness`: the ref is the hash of the task, the fingerprints and when they were observed.
      const witnessHash = contentHash({ task_id: event.task_id, fingerprints: witness['fingerprints'], observed_at: witness['observed_at'] });
      if (witnessHash !== undefined) this.#first(this.#witnesses, witnessHash, { index, pointer: '/payload/state_witness', binding: 'state_witness', sha256: witnessHash });
    }
    const packetRef = payload['approval_packet_ref'];
    if (typeof packetRef === 'string' && isRecord(payload['packet'])) {
      // The stored packet document (`@writ/runtime` approvalPacketDocument): `approval_packet_ref` = `artifact:sha256:<SHA-256 of its RFC 8785 form>`.
      const document = approvalPacketDocument(payload['packet'], isRecord(witness) ? witness : undefined);
      const packetHash = contentHash(document);
      if (packetHash !== undefined && packetRef === `artifact:sha256:${packetHash}`) {
        this.#first(this.#packets, packetRef, { index, pointer: '/payload', binding: 'approval_packet', sha256: packetHash });
      }
    }
  }

  /** The segment position of an event id (its first occurrence). */
  positionOf(eventId: string): number | undefined {
    return this.#byEventId.get(eventId);
  }

  /** Where `ref` resolves among the events before position `before`, or why it does not. */
  resolve(field: BundleReferenceField, ref: string, before: number): BundleReference | string {
    const found = this.#locate(field, ref);
    if (typeof found === 'string') return found;
    if (found.index >= before) return 'what it names is recorded only after the receipt';
    const event = this.#events[found.index] as SegmentEvent;
    return { field, ref, event_id: event.event_id, pointer: found.pointer, binding: found.binding, sha256: found.sha256 };
  }

  #locate(field: BundleReferenceField, ref: string): Location | string {
    if (ref.startsWith('event:')) {
      const index = this.#byEventId.get(ref.slice('event:'.length));
      if (index === undefined) return 'no event of the segment has this id';
      return { index, pointer: '', binding: 'event', sha256: (this.#events[index] as SegmentEvent).hash };
    }
    if (PACKET_REF.test(ref)) return this.#packets.get(ref) ?? 'no approval.requested of the segment holds a packet document with this hash';
    const hex = SHA256_REF.exec(ref)?.[1] ?? (HASH_FIELDS.has(field) && HEX.test(ref) ? ref : undefined);
    if (hex !== undefined) return this.#hashes.get(hex) ?? this.#witnesses.get(hex) ?? 'nothing recorded in the segment has this SHA-256';
    const object = OBJECT_REF.exec(ref);
    if (object !== null) return this.#objects.get(`${object[1]}:${object[2]}`) ?? `no ${object[1]} with this id is recorded in the segment`;
    return 'not a reference form the segment can resolve (event:, sha256:, <kind>:<id>)';
  }
}

/** Resolves every reference of `receipt` among the events before its own `receipt.issued` (at position `before`). */
export function resolveReferences(receipt: Readonly<Record<string, unknown>>, index: SegmentIndex, before: number): ReferenceResolution {
  const references: BundleReference[] = [];
  const unresolved: UnresolvedRef[] = [];
  for (const { field, ref } of receiptRefs(receipt)) {
    const resolved = index.resolve(field, ref, before);
    if (typeof resolved === 'string') unresolved.push({ field, ref, why: resolved });
    else references.push(resolved);
  }
  return { references, unresolved };
}
