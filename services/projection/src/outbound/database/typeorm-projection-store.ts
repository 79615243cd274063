import type { DataSource, EntityManager, FindOptionsOrder, ObjectLiteral } from 'typeorm';
import type { ProjectionSnapshot, ProjectionStore, ProjectionTx, ReadModel, ViewChecksum } from '../../application/ports.js';
import type { RowChange } from '../../application/project-event.js';
import {
  VIEW_NAMES,
  VIEWS,
  type ActionRow,
  type ApprovalRow,
  type GrantRow,
  type Locator,
  type PrincipalRow,
  type ReceiptRow,
  type TaskEventRow,
  type TaskRow,
  type ViewName,
  type ViewRows,
} from '../../application/views/index.js';
import { ActionEntity, ApprovalEntity, GrantEntity, PrincipalEntity, ReceiptEntity, TaskEntity, TaskEventEntity, VIEW_ENTITIES } from './entities.js';
import { databaseError } from './projection-database.js';

/** The checkpoint row of the live projector. */
export const PROJECTOR_NAME = 'projection';

function primaryKeyOrder(view: ViewName): FindOptionsOrder<ObjectLiteral> {
  return Object.fromEntries(VIEWS[view].primaryKey.map((column) => [column, 'ASC' as const]));
}

/**
 * The read models in one Postgres schema, through typeorm. The adapter is
 * dumb on purpose: it loads, saves and locks; what a row becomes is decided
 * by the folds in `application/`, which is what makes a rebuild identical.
 */
export class TypeormProjectionStore implements ProjectionStore, ReadModel {
  private readonly schema: string;

  constructor(
    private readonly dataSource: DataSource,
    private readonly projector: string = PROJECTOR_NAME,
  ) {
    this.schema = `"${String((dataSource.options as { schema?: string }).schema ?? 'public')}"`;
  }

  private table(name: string): string {
    return `${this.schema}."${name}"`;
  }

  // ---- ProjectionStore --------------------------------------------------------------------------

  async transaction<T>(work: (tx: ProjectionTx) => Promise<T>): Promise<T> {
    try {
      return await this.dataSource.transaction((manager) => work(new TypeormProjectionTx(manager, this.table('checkpoints'), this.projector)));
    } catch (error) {
      throw databaseError('apply an event', error);
    }
  }

  async checkpoint(): Promise<number> {
    return this.run('read the checkpoint', async () => {
      const rows: Array<{ last_seq: string }> = await this.dataSource.query(`SELECT last_seq FROM ${this.table('checkpoints')} WHERE projector = $1`, [this.projector]);
      return rows[0] === undefined ? 0 : Number(rows[0].last_seq);
    });
  }

  /** Checkpoint and per-view checksums from one REPEATABLE READ snapshot (each event commits with its checkpoint). */
  async snapshot(): Promise<ProjectionSnapshot> {
    return this.run('checksum the views', () =>
      this.dataSource.transaction('REPEATABLE READ', async (manager) => {
        const rows: Array<{ last_seq: string }> = await manager.query(`SELECT last_seq FROM ${this.table('checkpoints')} WHERE projector = $1`, [this.projector]);
        const views = {} as Record<ViewName, ViewChecksum>;
        for (const view of VIEW_NAMES) {
          const order = VIEWS[view].primaryKey.map((column) => `t."${column}"`).join(', ');
          const [result]: Array<{ rows: number; checksum: string }> = await manager.query(
            `SELECT count(*)::int AS rows, md5(coalesce(string_agg(md5(row_to_json(t)::text), ',' ORDER BY ${order}), '')) AS checksum FROM ${this.table(view)} t`,
          );
          views[view] = { rows: result?.rows ?? 0, checksum: result?.checksum ?? '' };
        }
        return { lastSeq: rows[0] === undefined ? 0 : Number(rows[0].last_seq), views };
      }),
    );
  }

  // ---- ReadModel --------------------------------------------------------------------------------

  action(actionRequestId: string): Promise<ActionRow | undefined> {
    return this.run('read an action', async () => (await this.dataSource.getRepository(ActionEntity).findOneBy({ action_request_id: actionRequestId })) ?? undefined);
  }

  task(taskId: string): Promise<TaskRow | undefined> {
    return this.run('read a task', async () => (await this.dataSource.getRepository(TaskEntity).findOneBy({ task_id: taskId })) ?? undefined);
  }

  taskEvents(taskId: string, page: { readonly afterSeq: number; readonly limit: number }): Promise<TaskEventRow[]> {
    return this.run('read a task timeline', () =>
      this.dataSource
        .getRepository(TaskEventEntity)
        .createQueryBuilder('e')
        .where('e.task_id = :taskId AND e.task_seq > :after', { taskId, after: page.afterSeq })
        .orderBy('e.task_seq', 'ASC')
        .take(page.limit)
        .getMany(),
    );
  }

  approvals(filter: { readonly status: string | undefined; readonly limit: number }): Promise<ApprovalRow[]> {
    return this.run('list approvals', () =>
      this.dataSource.getRepository(ApprovalEntity).find({
        where: filter.status === undefined ? {} : { status: filter.status as ApprovalRow['status'] },
        order: { requested_at: 'ASC', approval_id: 'ASC' },
        take: filter.limit,
      }),
    );
  }

  approval(approvalId: string): Promise<ApprovalRow | undefined> {
    return this.run('read an approval', async () => (await this.dataSource.getRepository(ApprovalEntity).findOneBy({ approval_id: approvalId })) ?? undefined);
  }

  approvalEvents(taskId: string, approvalId: string): Promise<TaskEventRow[]> {
    return this.run('read an approval timeline', () =>
      this.dataSource
        .getRepository(TaskEventEntity)
        .createQueryBuilder('e')
        .where('e.task_id = :taskId', { taskId })
        .andWhere(`((e.entity_type = 'approval' AND e.entity_id = :approvalId) OR (e.event_type = 'decision.recorded' AND e.payload->>'subject_ref' = :subjectRef))`, {
          approvalId,
          subjectRef: `approval:${approvalId}`,
        })
        .orderBy('e.task_seq', 'ASC')
        .take(1_000)
        .getMany(),
    );
  }

  receipt(receiptId: string): Promise<ReceiptRow | undefined> {
    return this.run('read a receipt', async () => (await this.dataSource.getRepository(ReceiptEntity).findOneBy({ receipt_id: receiptId })) ?? undefined);
  }

  grant(grantId: string): Promise<GrantRow | undefined> {
    return this.run('read a grant', async () => (await this.dataSource.getRepository(GrantEntity).findOneBy({ grant_id: grantId })) ?? undefined);
  }

  servicePrincipals(): Promise<PrincipalRow[]> {
    return this.run('list service principals', () =>
      this.dataSource.getRepository(PrincipalEntity).find({ where: { type: 'service' }, order: { principal_id: 'ASC' } }),
    );
  }

  async ping(): Promise<void> {
    await this.run('answer a ping', () => this.dataSource.query('SELECT 1'));
  }

  private async run<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw databaseError(operation, error);
    }
  }
}

class TypeormProjectionTx implements ProjectionTx {
  constructor(
    private readonly manager: EntityManager,
    private readonly checkpoints: string,
    private readonly projector: string,
  ) {}

  async lockCheckpoint(): Promise<number> {
    await this.manager.query(`INSERT INTO ${this.checkpoints} (projector, last_seq, updated_at) VALUES ($1, 0, now()) ON CONFLICT (projector) DO NOTHING`, [this.projector]);
    const rows: Array<{ last_seq: string }> = await this.manager.query(`SELECT last_seq FROM ${this.checkpoints} WHERE projector = $1 FOR UPDATE`, [this.projector]);
    return Number(rows[0]?.last_seq ?? 0);
  }

  async load<K extends ViewName>(view: K, locator: Locator): Promise<ViewRows[K] | undefined> {
    const row = await this.manager.getRepository<ObjectLiteral>(VIEW_ENTITIES[view]).findOne({ where: { ...locator }, order: primaryKeyOrder(view) });
    return (row ?? undefined) as ViewRows[K] | undefined;
  }

  async save(change: RowChange): Promise<void> {
    await this.manager.getRepository<ObjectLiteral>(VIEW_ENTITIES[change.view]).upsert(change.row as ObjectLiteral, {
      conflictPaths: [...VIEWS[change.view].primaryKey],
      skipUpdateIfNoValuesChanged: false,
    });
  }

  async setCheckpoint(streamSeq: number): Promise<void> {
    await this.manager.query(`UPDATE ${this.checkpoints} SET last_seq = $2, updated_at = now() WHERE projector = $1`, [this.projector, streamSeq]);
  }
}
