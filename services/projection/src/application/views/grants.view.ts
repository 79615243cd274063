import { attemptIdOf, field, fromNumericDate, idField, intField, occurredAt, text, type ProjectedEvent } from '../projected-event.js';
import { patch, type Locator, type View, type Folded } from './view.js';
import type { GrantRow } from '@writ/contracts/projection-rows';

/**
 * A capability grant as the log describes it: its claims and its uses. The
 * grant's JWS is never stored (a bearer capability has no reader), and
 * whether it is usable is never decided from here: the executor checks the
 * grant against the log itself (projection lag must never authorize).
 */
export type { GrantRow };

const GRANT_EVENTS = new Set(['grant.issued', 'grant.use_claimed', 'grant.use_released', 'grant.refused', 'grant.revoked']);

function grantIdOf(event: ProjectedEvent): string | null {
  const { envelope } = event;
  if (envelope.event_type === 'grant.issued') return idField(field(envelope.payload, 'claims'), 'jti');
  return idField(envelope.payload, 'grant_id') ?? (envelope.entity_type === 'grant' ? envelope.entity_id : null);
}

function locate(event: ProjectedEvent): Locator | undefined {
  if (event.aggregate.type !== 'task' || !GRANT_EVENTS.has(event.envelope.event_type)) return undefined;
  const grantId = grantIdOf(event);
  if (grantId !== null) return { grant_id: grantId };
  // A use that names no grant: the active grant of its attempt.
  const attempt = attemptIdOf(event);
  return attempt === null ? undefined : { task_id: event.aggregate.id, attempt_id: attempt, status: 'active' };
}

function fold(row: GrantRow | undefined, event: ProjectedEvent): Folded<GrantRow> | undefined {
  const { envelope } = event;
  const data = envelope.payload;
  const at = occurredAt(event);
  switch (envelope.event_type) {
    case 'grant.issued': {
      if (row !== undefined) return row;
      const claims = field(data, 'claims');
      const grantId = idField(claims, 'jti');
      if (grantId === null) return undefined;
      return {
        grant_id: grantId,
        task_id: event.aggregate.id,
        step_id: idField(claims, 'step_id') ?? envelope.step_id ?? null,
        attempt_id: idField(claims, 'attempt_id') ?? attemptIdOf(event),
        action_class: text(claims, 'action_class'),
        issued_to: idField(claims, 'sub'),
        issued_by: idField(claims, 'issued_by_principal_id') ?? idField(claims, 'iss'),
        issued_at: fromNumericDate(field(claims, 'iat')),
        expires_at: fromNumericDate(field(claims, 'exp')),
        max_uses: intField(claims, 'max_uses') ?? 1,
        uses: 0,
        status: 'active',
        updated_at: at,
      };
    }
    case 'grant.use_claimed': {
      if (row === undefined || row.status === 'revoked') return row;
      // By use number, so a use claimed twice (a duplicate event) counts once.
      const uses = Math.max(row.uses, intField(data, 'use_no') ?? row.uses + 1);
      return patch(row, { uses, status: uses >= row.max_uses ? 'exhausted' : row.status }, at);
    }
    case 'grant.use_released':
      // A use proven never started gives its use back: the next claim (a new use number) may take it.
      if (row === undefined || row.status === 'revoked') return row;
      return patch(row, { status: 'active' }, at);
    case 'grant.revoked':
      return row === undefined ? row : patch(row, { status: 'revoked' }, at);
    default:
      return row;
  }
}

export const grantsView: View<GrantRow> = {
  name: 'grants',
  primaryKey: ['grant_id'],
  published: true,
  topicId: (row) => row.grant_id,
  locate,
  fold,
};
