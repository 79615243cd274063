import { evolvePrincipal, type PrincipalRecord } from '@writ/runtime';
import { instant, occurredAt, type ProjectedEvent } from '../projected-event.js';
import { patch, type View, type Folded } from './view.js';
import type { PrincipalRow } from '@writ/contracts/projection-rows';

/**
 * A principal and its active public keys, folded with the runtime's own
 * `evolvePrincipal` (the fold ingress and approval authorize with), so the
 * key list here can never disagree with theirs about what a key event means.
 * Only public JWKs exist here: the contract refuses a JWK carrying `d`.
 */
export type { PrincipalRow };

function toRecord(row: PrincipalRow): PrincipalRecord {
  return {
    principal_id: row.principal_id,
    principal_type: row.type,
    display_name: row.display_name,
    roles: row.roles,
    keys: new Map(row.keys.map((key) => [key.kid, key])),
    revoked_kids: new Set(row.revoked_kids),
  };
}

function fold(row: PrincipalRow | undefined, event: ProjectedEvent): Folded<PrincipalRow> | undefined {
  const before = row === undefined ? undefined : toRecord(row);
  const after = evolvePrincipal(before, event.envelope);
  if (after === undefined || after === before) return row;
  const at = occurredAt(event);
  const next = {
    type: after.principal_type,
    display_name: after.display_name,
    roles: [...after.roles],
    keys: [...after.keys.values()],
    revoked_kids: [...after.revoked_kids],
  };
  if (row === undefined) {
    return { principal_id: event.aggregate.id, ...next, registered_at: instant(event.envelope.payload['at']) ?? at, updated_at: at };
  }
  return patch(row, next, at);
}

export const principalsView: View<PrincipalRow> = {
  name: 'principals',
  primaryKey: ['principal_id'],
  published: true,
  topicId: (row) => row.principal_id,
  locate: (event) => (event.aggregate.type === 'principal' ? { principal_id: event.aggregate.id } : undefined),
  fold,
};
