import type { ChangesPage, ProjectionChange, PublishedView } from '@writ/contracts/projection-rows';
import type { EntityManager, EntitySchema } from 'typeorm';
import type { ChangesQuery } from '../../application/ports.js';
import { VIEWS } from '../../application/views/index.js';
import { VIEW_ENTITIES } from './entities.js';

/**
 * The scope of an own reader (`httpReadScope` own), as SQL on a view's rows
 * aliased `r`, the same rules as the single reads of `ReadService`: its own
 * principal, the tasks it owns, the actions it proposed or that run in its
 * tasks, and everything hanging off its tasks. `$owner` is the principal id.
 */
function ownScope(view: PublishedView, tasks: string): string {
  const ownTask = `r."task_id" IN (SELECT t."task_id" FROM ${tasks} t WHERE t."owner_principal_id" = :owner)`;
  switch (view) {
    case 'principals':
      return `r."principal_id" = :owner`;
    case 'tasks':
      return `r."owner_principal_id" = :owner`;
    case 'actions':
      return `(r."principal_id" = :owner OR ${ownTask})`;
    default:
      return ownTask;
  }
}

/**
 * One page of the changes feed, in the transaction `manager` runs (REPEATABLE
 * READ: the checkpoint and every view from one snapshot, so a version the
 * page includes is whole, and nothing at or below the checkpoint is still to
 * come — each event commits with the checkpoint, in log order).
 *
 * 1. the first `limit + 1` versions after `since` across the views (each view
 *    read through its `row_version` index);
 * 2. the page ends at the `limit`-th of them (`cutoff`), or takes everything
 *    when there are no more: never in the middle of a version, so the next
 *    page can start after `cutoff` without losing a row;
 * 3. every row with `since < row_version <= cutoff`, in (version, view, key) order.
 */
export async function readChangesPage(manager: EntityManager, schema: string, checkpointTable: string, projector: string, query: ChangesQuery): Promise<ChangesPage> {
  const tasks = `"${schema}"."tasks"`;
  const owner = query.owner;
  /** The own scope with the owner as the positional parameter `$<n>` (raw SQL), nothing for a wide reader. */
  const where = (view: PublishedView, n: number) => (owner === undefined ? '' : ` AND ${ownScope(view, tasks).replaceAll(':owner', `$${n}`)}`);
  const [checkpointRow]: Array<{ last_seq: string }> = await manager.query(`SELECT last_seq FROM ${checkpointTable} WHERE projector = $1`, [projector]);
  const checkpoint = checkpointRow === undefined ? 0 : Number(checkpointRow.last_seq);

  const probe = query.views.map((view) => `(SELECT r."row_version" FROM "${schema}"."${view}" r WHERE r."row_version" > $1${where(view, 3)} ORDER BY r."row_version" LIMIT $2)`).join(' UNION ALL ');
  const params: unknown[] = owner === undefined ? [query.since, query.limit + 1] : [query.since, query.limit + 1, owner];
  const versions = ((await manager.query(`SELECT v.row_version FROM (${probe}) v ORDER BY v.row_version LIMIT $2`, params)) as Array<{ row_version: string }>).map((row) =>
    Number(row.row_version),
  );
  let cutoff: number | undefined;
  let more = false;
  if (versions.length > query.limit) {
    cutoff = versions[query.limit - 1] as number;
    more = (versions[query.limit] as number) > cutoff || (await anyAfter(manager, schema, query, cutoff, where));
  }

  const changes: Array<ProjectionChange & { readonly order: number }> = [];
  for (const [order, view] of query.views.entries()) {
    const entity = VIEW_ENTITIES[view] as EntitySchema;
    const builder = manager.getRepository(entity).createQueryBuilder('r').where('r.row_version > :since', { since: query.since });
    if (cutoff !== undefined) builder.andWhere('r.row_version <= :cutoff', { cutoff });
    if (owner !== undefined) builder.andWhere(ownScope(view, tasks), { owner });
    builder.orderBy('r.row_version', 'ASC');
    for (const column of VIEWS[view].primaryKey) builder.addOrderBy(`r.${column}`, 'ASC');
    const topicId = (VIEWS[view] as unknown as { topicId: (row: unknown) => string }).topicId;
    for (const row of (await builder.getMany()) as Array<Record<string, unknown>>) {
      changes.push({ view, id: topicId(row), row_version: Number(row['row_version']), row, order } as ProjectionChange & { order: number });
    }
  }
  // Each view's rows are in (version, key) order already; a stable sort by (version, view) keeps the key order.
  changes.sort((a, b) => a.row_version - b.row_version || a.order - b.order);
  const page = changes.map(({ order: _order, ...change }) => change as ProjectionChange);
  if (owner !== undefined) {
    // A caller that reads its own only is not told the log's position (as /v1/projections/status is not its to read): its cursor is its own last row.
    const own = more ? (cutoff as number) : Math.max(query.since, page.at(-1)?.row_version ?? 0);
    return { changes: page, next: own, more, checkpoint: own };
  }
  const next = more ? (cutoff as number) : Math.max(query.since, checkpoint);
  return { changes: page, next, more, checkpoint };
}

/** Whether any row of the query's views and scope has a version above `cutoff`. */
async function anyAfter(manager: EntityManager, schema: string, query: ChangesQuery, cutoff: number, where: (view: PublishedView, n: number) => string): Promise<boolean> {
  const probe = query.views.map((view) => `(SELECT 1 FROM "${schema}"."${view}" r WHERE r."row_version" > $1${where(view, 2)} LIMIT 1)`).join(' UNION ALL ');
  const [row]: Array<{ found: boolean }> = await manager.query(`SELECT EXISTS (${probe}) AS found`, query.owner === undefined ? [cutoff] : [cutoff, query.owner]);
  return row?.found === true;
}
