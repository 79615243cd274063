import type { DataSource, EntityManager, EntitySchema, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import type { ConversationFocusRow, ConversationMessageRow, QuarantineReason, QuarantineRecord } from '@writ/contracts';
import type { ChangesPage, PublishedView } from '@writ/contracts/projection-rows';
import type { ListFilterOf } from '../../application/list-page.js';
import type {
  ChangeFeed,
  ChangesQuery,
  ListRequest,
  ProjectionSnapshot,
  ProjectionStore,
  ProjectionTx,
  QuarantineSummary,
  ReadModel,
  ViewChecksum,
} from '../../application/ports.js';
import type { RowChange, RowPlan } from '../../application/project-event.js';
import {
  VIEW_NAMES,
  VIEWS,
  type ActionRow,
  type ApprovalRow,
  type ArtifactRow,
  type AttemptRow,
  type CellRow,
  type DecisionRow,
  type BeliefRow,
  type MemoryRow,
  type WorkingStateRow,
  type GrantRow,
  type Locator,
  type PrincipalRow,
  type ReceiptRow,
  type StepRow,
  type TaskEventRow,
  type TaskRow,
  type ViewName,
  type ViewRows,
} from '../../application/views/index.js';
import {
  ActionEntity,
  ApprovalEntity,
  ArtifactEntity,
  AttemptEntity,
  CellEntity,
  BeliefEntity,
  MemoryEntity,
  ConversationFocusEntity,
  ConversationMessageEntity,
  WorkingStateEntity,
  DecisionEntity,
  GrantEntity,
  PrincipalEntity,
  ReceiptEntity,
  StepEntity,
  TaskEntity,
  TaskEventEntity,
} from './entities.js';
import { readChangesPage } from './change-feed-query.js';
import { databaseError } from './projection-database.js';
import { RowCache } from './row-cache.js';

/** The checkpoint row of the live projector. */
export const PROJECTOR_NAME = 'projection';

/**
 * The read models in one Postgres schema, through typeorm. The adapter is
 * dumb on purpose: it loads, saves and locks; what a row becomes is decided
 * by the folds in `application/`, which is what makes a rebuild identical.
 */
export class TypeormProjectionStore implements ProjectionStore, ReadModel, ChangeFeed {
  private readonly schema: string;
  private readonly schemaName: string;

  constructor(
    private readonly dataSource: DataSource,
    private readonly projector: string = PROJECTOR_NAME,
  ) {
    this.schemaName = String((dataSource.options as { schema?: string }).schema ?? 'public');
    this.schema = `"${this.schemaName}"`;
  }

  private table(name: string): string {
    return `${this.schema}."${name}"`;
  }

  // ---- ProjectionStore --------------------------------------------------------------------------

  async transaction<T>(work: (tx: ProjectionTx) => Promise<T>): Promise<T> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        const tx = new TypeormProjectionTx(manager, this.schemaName, this.table('checkpoints'), this.table('quarantined_messages'), this.projector);
        const result = await work(tx);
        // The rows the work changed, written back before the commit (with the checkpoint, all or nothing).
        await tx.flush();
        return result;
      });
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
  async snapshot(views: readonly ViewName[] = VIEW_NAMES): Promise<ProjectionSnapshot> {
    return this.run('checksum the views', () =>
      this.dataSource.transaction('REPEATABLE READ', async (manager) => {
        const rows: Array<{ last_seq: string }> = await manager.query(`SELECT last_seq FROM ${this.table('checkpoints')} WHERE projector = $1`, [this.projector]);
        const checksums: Partial<Record<ViewName, ViewChecksum>> = {};
        for (const view of views) {
          const order = VIEWS[view].primaryKey.map((column) => `t."${column}"`).join(', ');
          const [result]: Array<{ rows: number; checksum: string }> = await manager.query(
            `SELECT count(*)::int AS rows, md5(coalesce(string_agg(md5(row_to_json(t)::text), ',' ORDER BY ${order}), '')) AS checksum FROM ${this.table(view)} t`,
          );
          checksums[view] = { rows: result?.rows ?? 0, checksum: result?.checksum ?? '' };
        }
        return { lastSeq: rows[0] === undefined ? 0 : Number(rows[0].last_seq), views: checksums };
      }),
    );
  }

  async quarantined(latest: number): Promise<QuarantineSummary> {
    return this.run('count the quarantined messages', async () => {
      const counts: Array<{ reason: QuarantineReason; count: number }> = await this.dataSource.query(
        `SELECT reason, count(*)::int AS count FROM ${this.table('quarantined_messages')} GROUP BY reason ORDER BY reason`,
      );
      const rows: Array<Omit<QuarantineRecord, 'stream_seq'> & { stream_seq: string }> = await this.dataSource.query(
        `SELECT stream_seq, stream, subject, reason, sha256, bytes, detail FROM ${this.table('quarantined_messages')} ORDER BY stream_seq DESC LIMIT $1`,
        [latest],
      );
      return {
        total: counts.reduce((sum, row) => sum + row.count, 0),
        by_reason: Object.fromEntries(counts.map((row) => [row.reason, row.count])),
        latest: rows.map((row) => ({ ...row, stream_seq: Number(row.stream_seq) })),
      };
    });
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

  listTasks(request: ListRequest<ListFilterOf<'tasks'>>): Promise<TaskRow[]> {
    const { filter } = request;
    return this.run('list tasks', () =>
      this.keysetPage(TaskEntity, 't', { at: 'created_at', id: 'task_id', order: 'DESC' }, request, (qb) => {
        if (request.visibleTo !== undefined) qb.andWhere('t.owner_principal_id = :visibleTo', { visibleTo: request.visibleTo });
        if (filter.principal_id !== undefined) qb.andWhere('t.owner_principal_id = :principalId', { principalId: filter.principal_id });
        if (filter.status !== undefined) qb.andWhere('t.status = :status', { status: filter.status });
        if (filter.policy_profile !== undefined) qb.andWhere('t.policy_profile = :profile', { profile: filter.policy_profile });
        if (filter.q !== undefined) {
          qb.andWhere(
            "(t.task_id ILIKE :q ESCAPE '\\' OR t.title ILIKE :q ESCAPE '\\' OR t.goal ILIKE :q ESCAPE '\\' OR t.owner_principal_id ILIKE :q ESCAPE '\\' OR t.policy_profile ILIKE :q ESCAPE '\\')",
            { q: `%${likeLiteral(filter.q)}%` },
          );
        }
      }),
    );
  }

  listActions(request: ListRequest<ListFilterOf<'actions'>>): Promise<ActionRow[]> {
    const { filter } = request;
    return this.run('list actions', () =>
      this.keysetPage(ActionEntity, 'a', { at: 'created_at', id: 'action_request_id', order: 'DESC' }, request, (qb) => {
        // An agent's own: the actions it proposed, and those of the tasks it owns (GET /v1/actions/<id> decides the same).
        if (request.visibleTo !== undefined) {
          qb.andWhere(`(a.principal_id = :visibleTo OR a.task_id IN (${this.ownedTasks(':visibleTo')}))`, { visibleTo: request.visibleTo });
        }
        if (filter.principal_id !== undefined) qb.andWhere('a.principal_id = :principalId', { principalId: filter.principal_id });
        if (filter.task_id !== undefined) qb.andWhere('a.task_id = :taskId', { taskId: filter.task_id });
        if (filter.status !== undefined) qb.andWhere('a.status = :status', { status: filter.status });
        if (filter.action_class !== undefined) qb.andWhere('a.action_class = :actionClass', { actionClass: filter.action_class });
        if (filter.risk_band !== undefined) qb.andWhere('a.risk_band = :riskBand', { riskBand: filter.risk_band });
      }),
    );
  }

  listApprovals(request: ListRequest<ListFilterOf<'approvals'>>): Promise<ApprovalRow[]> {
    const { filter } = request;
    return this.run('list approvals', () =>
      this.keysetPage(ApprovalEntity, 'ap', { at: 'requested_at', id: 'approval_id', order: 'ASC' }, request, (qb) => {
        this.byTaskOwner(qb, 'ap', request.visibleTo, filter.principal_id);
        if (filter.task_id !== undefined) qb.andWhere('ap.task_id = :taskId', { taskId: filter.task_id });
        if (filter.status !== undefined) qb.andWhere('ap.status = :status', { status: filter.status });
        // The packet is what the approver decides on: its action class and risk band are the ones shown.
        if (filter.action_class !== undefined) qb.andWhere(`ap.packet->>'action_class' = :actionClass`, { actionClass: filter.action_class });
        if (filter.risk_band !== undefined) qb.andWhere(`ap.packet->>'risk_band' = :riskBand`, { riskBand: filter.risk_band });
      }),
    );
  }

  listReceipts(request: ListRequest<ListFilterOf<'receipts'>>): Promise<ReceiptRow[]> {
    const { filter } = request;
    return this.run('list receipts', () =>
      this.keysetPage(ReceiptEntity, 'r', { at: 'created_at', id: 'receipt_id', order: 'DESC' }, request, (qb) => {
        this.byTaskOwner(qb, 'r', request.visibleTo, filter.principal_id);
        if (filter.task_id !== undefined) qb.andWhere('r.task_id = :taskId', { taskId: filter.task_id });
        if (filter.action_request_id !== undefined) qb.andWhere('r.action_request_id = :actionRequestId', { actionRequestId: filter.action_request_id });
        if (filter.result_code !== undefined) qb.andWhere('r.result_code = :resultCode', { resultCode: filter.result_code });
        if (filter.receipt_class !== undefined) qb.andWhere('r.receipt_class = :receiptClass', { receiptClass: filter.receipt_class });
      }),
    );
  }

  listCells(request: ListRequest<ListFilterOf<'cells'>>): Promise<CellRow[]> {
    const { filter } = request;
    return this.run('list cells', () =>
      this.keysetPage(CellEntity, 'c', { at: 'created_at', id: 'cell_id', order: 'DESC' }, request, (qb) => {
        this.byTaskOwner(qb, 'c', request.visibleTo, filter.principal_id);
        if (filter.task_id !== undefined) qb.andWhere('c.task_id = :taskId', { taskId: filter.task_id });
        if (filter.status !== undefined) qb.andWhere('c.status = :status', { status: filter.status });
        if (filter.director_id !== undefined) qb.andWhere('c.director_id = :directorId', { directorId: filter.director_id });
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

  principal(principalId: string): Promise<PrincipalRow | undefined> {
    return this.run('read a principal', async () => (await this.dataSource.getRepository(PrincipalEntity).findOneBy({ principal_id: principalId })) ?? undefined);
  }

  grants(filter: { readonly status: string | undefined; readonly taskId: string | undefined; readonly limit: number }): Promise<GrantRow[]> {
    return this.run('list grants', () =>
      this.dataSource.getRepository(GrantEntity).find({
        where: { ...(filter.status === undefined ? {} : { status: filter.status as GrantRow['status'] }), ...(filter.taskId === undefined ? {} : { task_id: filter.taskId }) },
        order: { issued_at: 'DESC', grant_id: 'ASC' },
        take: filter.limit,
      }),
    );
  }

  steps(filter: { readonly status: string | undefined; readonly taskId: string | undefined; readonly limit: number }): Promise<StepRow[]> {
    return this.run('list steps', () =>
      this.dataSource.getRepository(StepEntity).find({
        where: { ...(filter.status === undefined ? {} : { status: filter.status }), ...(filter.taskId === undefined ? {} : { task_id: filter.taskId }) },
        order: { planned_at: 'ASC', step_id: 'ASC' },
        take: filter.limit,
      }),
    );
  }

  step(stepId: string): Promise<StepRow | undefined> {
    return this.run('read a step', async () => (await this.dataSource.getRepository(StepEntity).findOneBy({ step_id: stepId })) ?? undefined);
  }

  stepAttempts(stepId: string): Promise<AttemptRow[]> {
    return this.run("read a step's attempts", () =>
      this.dataSource.getRepository(AttemptEntity).find({ where: { step_id: stepId }, order: { attempt_no: 'ASC', attempt_id: 'ASC' }, take: 1_000 }),
    );
  }

  attempt(attemptId: string): Promise<AttemptRow | undefined> {
    return this.run('read an attempt', async () => (await this.dataSource.getRepository(AttemptEntity).findOneBy({ attempt_id: attemptId })) ?? undefined);
  }

  artifacts(filter: { readonly taskId: string | undefined; readonly kind: string | undefined; readonly limit: number }): Promise<ArtifactRow[]> {
    return this.run('list artifacts', () =>
      this.dataSource.getRepository(ArtifactEntity).find({
        where: { ...(filter.taskId === undefined ? {} : { task_id: filter.taskId }), ...(filter.kind === undefined ? {} : { kind: filter.kind }) },
        order: { task_id: 'ASC', task_seq: 'ASC', artifact_id: 'ASC' },
        take: filter.limit,
      }),
    );
  }

  artifact(artifactId: string): Promise<ArtifactRow | undefined> {
    return this.run('read an artifact', async () => (await this.dataSource.getRepository(ArtifactEntity).findOneBy({ artifact_id: artifactId })) ?? undefined);
  }

  decisions(taskId: string, page: { readonly afterSeq: number; readonly limit: number }): Promise<DecisionRow[]> {
    return this.run('read a decision timeline', () =>
      this.dataSource
        .getRepository(DecisionEntity)
        .createQueryBuilder('d')
        .where('d.task_id = :taskId AND d.task_seq > :after', { taskId, after: page.afterSeq })
        .orderBy('d.task_seq', 'ASC')
        .take(page.limit)
        .getMany(),
    );
  }

  conversationFocus(principalId: string, limit: number): Promise<ConversationFocusRow[]> {
    return this.run('read a principal\'s conversation focus', () =>
      this.dataSource.getRepository(ConversationFocusEntity).find({ where: { principal_id: principalId }, order: { updated_at: 'DESC', conversation_id: 'ASC' }, take: limit }),
    );
  }

  conversationMessages(principalId: string, conversationId: string, page: { readonly afterSeq: number; readonly limit: number }): Promise<ConversationMessageRow[]> {
    return this.run('read a conversation\'s history', () =>
      this.dataSource
        .getRepository(ConversationMessageEntity)
        .createQueryBuilder('m')
        .where('m.principal_id = :principalId AND m.conversation_id = :conversationId AND m.conversation_seq > :after', { principalId, conversationId, after: page.afterSeq })
        .orderBy('m.conversation_seq', 'ASC')
        .take(page.limit)
        .getMany(),
    );
  }

  workingState(taskId: string): Promise<WorkingStateRow | undefined> {
    return this.run('read a working state', async () => (await this.dataSource.getRepository(WorkingStateEntity).findOneBy({ task_id: taskId })) ?? undefined);
  }

  beliefs(taskId: string, filter: { readonly status: string | undefined }): Promise<BeliefRow[]> {
    return this.run('read a task\'s beliefs', () =>
      this.dataSource.getRepository(BeliefEntity).find({
        where: { task_id: taskId, ...(filter.status === undefined ? {} : { status: filter.status as BeliefRow['status'] }) },
        order: { created_at: 'ASC', belief_id: 'ASC' },
      }),
    );
  }

  memoryRecord(memoryId: string): Promise<MemoryRow | undefined> {
    return this.run('read a memory record', async () => (await this.dataSource.getRepository(MemoryEntity).findOneBy({ memory_id: memoryId })) ?? undefined);
  }

  memoryRecords(filter: { readonly status?: string; readonly scope?: string; readonly taskId?: string; readonly promotedBy?: string; readonly limit: number }): Promise<MemoryRow[]> {
    return this.run('read memory records', () =>
      this.dataSource.getRepository(MemoryEntity).find({
        where: {
          ...(filter.status === undefined ? {} : { status: filter.status as MemoryRow['status'] }),
          ...(filter.scope === undefined ? {} : { scope: filter.scope }),
          ...(filter.taskId === undefined ? {} : { task_id: filter.taskId }),
          ...(filter.promotedBy === undefined ? {} : { promoted_by: filter.promotedBy }),
        },
        order: { created_at: 'DESC', memory_id: 'ASC' },
        take: filter.limit,
      }),
    );
  }

  cell(cellId: string): Promise<CellRow | undefined> {
    return this.run('read a cell', async () => (await this.dataSource.getRepository(CellEntity).findOneBy({ cell_id: cellId })) ?? undefined);
  }

  viewRows(): Promise<Readonly<Record<ViewName, number>>> {
    return this.run('count the views', async () => {
      const counts = {} as Record<ViewName, number>;
      for (const view of VIEW_NAMES) {
        const [result]: Array<{ rows: number }> = await this.dataSource.query(`SELECT count(*)::int AS rows FROM ${this.table(view)}`);
        counts[view] = result?.rows ?? 0;
      }
      return counts;
    });
  }

  /** Approvals waiting for a director and when the oldest of them was requested (null when none waits); served by `approvals_status_idx`. */
  pendingApprovals(): Promise<{ readonly count: number; readonly oldestRequestedAt: Date | null }> {
    return this.run('count the pending approvals', async () => {
      const [row]: Array<{ count: number; oldest: Date | string | null }> = await this.dataSource.query(
        `SELECT count(*)::int AS count, min(requested_at) AS oldest FROM ${this.table('approvals')} WHERE status = 'pending'`,
      );
      const oldest = row?.oldest ?? null;
      return { count: row?.count ?? 0, oldestRequestedAt: oldest === null ? null : new Date(oldest) };
    });
  }

  /** One page of the changes feed, from one REPEATABLE READ snapshot (`change-feed-query.ts`). */
  changes(query: ChangesQuery): Promise<ChangesPage> {
    return this.run('read the changes feed', () =>
      this.dataSource.transaction('REPEATABLE READ', (manager) => readChangesPage(manager, this.schemaName, this.table('checkpoints'), this.projector, query)),
    );
  }

  async ping(): Promise<void> {
    await this.run('answer a ping', () => this.dataSource.query('SELECT 1'));
  }

  /**
   * One keyset page: `filters` add their conditions, then the rows strictly
   * after `request.after` in the order (time, id), `request.limit` of them.
   * The row comparison `(time, id) < (…)` is what the (time, id) indexes
   * serve; the time travels as text and is cast back (the rows' timestamps
   * have millisecond precision, so the ISO string is exact).
   */
  private keysetPage<Row extends ObjectLiteral>(
    entity: EntitySchema<Row>,
    alias: string,
    order: { readonly at: string; readonly id: string; readonly order: 'ASC' | 'DESC' },
    request: ListRequest<{ readonly since?: string | undefined; readonly until?: string | undefined }>,
    filters: (qb: SelectQueryBuilder<Row>) => void,
  ): Promise<Row[]> {
    const qb = this.dataSource.getRepository(entity).createQueryBuilder(alias).where('TRUE');
    filters(qb);
    const at = `${alias}.${order.at}`;
    if (request.filter.since !== undefined) qb.andWhere(`${at} >= CAST(:since AS timestamptz)`, { since: request.filter.since });
    if (request.filter.until !== undefined) qb.andWhere(`${at} < CAST(:until AS timestamptz)`, { until: request.filter.until });
    if (request.after !== undefined) {
      qb.andWhere(`(${at}, ${alias}.${order.id}) ${order.order === 'DESC' ? '<' : '>'} (CAST(:afterAt AS timestamptz), :afterId)`, {
        afterAt: request.after.at,
        afterId: request.after.id,
      });
    }
    return qb.orderBy(at, order.order).addOrderBy(`${alias}.${order.id}`, order.order).limit(request.limit).getMany();
  }

  /** `SELECT task_id FROM tasks WHERE owner_principal_id = <param>`: the tasks a principal owns (its own scope, and the owner filter). */
  private ownedTasks(param: string): string {
    return `SELECT o.task_id FROM ${this.table('tasks')} o WHERE o.owner_principal_id = ${param}`;
  }

  /** Rows whose task the caller owns (an agent's scope) and whose task `owner` owns (the `principal_id` filter). */
  private byTaskOwner<Row extends ObjectLiteral>(qb: SelectQueryBuilder<Row>, alias: string, visibleTo: string | undefined, owner: string | undefined): void {
    if (visibleTo !== undefined) qb.andWhere(`${alias}.task_id IN (${this.ownedTasks(':visibleTo')})`, { visibleTo });
    if (owner !== undefined) qb.andWhere(`${alias}.task_id IN (${this.ownedTasks(':owner')})`, { owner });
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
  private readonly rows: RowCache;

  constructor(
    private readonly manager: EntityManager,
    private readonly schema: string,
    private readonly checkpoints: string,
    private readonly quarantinedMessages: string,
    private readonly projector: string,
  ) {
    this.rows = new RowCache(manager, schema);
  }

  prefetch(plans: readonly RowPlan[]): Promise<void> {
    return this.rows.prefetch(plans);
  }

  flush(): Promise<void> {
    return this.rows.flush();
  }

  async lockCheckpoint(): Promise<number> {
    await this.manager.query(`INSERT INTO ${this.checkpoints} (projector, last_seq, updated_at) VALUES ($1, 0, now()) ON CONFLICT (projector) DO NOTHING`, [this.projector]);
    const rows: Array<{ last_seq: string }> = await this.manager.query(`SELECT last_seq FROM ${this.checkpoints} WHERE projector = $1 FOR UPDATE`, [this.projector]);
    return Number(rows[0]?.last_seq ?? 0);
  }

  load<K extends ViewName>(view: K, locator: Locator): Promise<ViewRows[K] | undefined> {
    return this.rows.load(view, locator);
  }

  async save(change: RowChange): Promise<void> {
    this.rows.save(change);
  }

  async viewVersions(views: readonly PublishedView[]): Promise<Readonly<Partial<Record<ViewName, number>>>> {
    // One round trip; each max() is an index-only scan of `<view>_row_version_idx`. The row cache writes at the commit, so this is the committed state.
    const columns = views.map((view, i) => `(SELECT max("row_version") FROM "${this.schema}"."${view}") AS v${i}`).join(', ');
    const [row]: Array<Record<string, string | null>> = await this.manager.query(`SELECT ${columns}`);
    return Object.fromEntries(views.map((view, i) => [view, Number(row?.[`v${i}`] ?? 0)]));
  }

  async setCheckpoint(streamSeq: number): Promise<void> {
    await this.manager.query(`UPDATE ${this.checkpoints} SET last_seq = $2, updated_at = now() WHERE projector = $1`, [this.projector, streamSeq]);
  }

  async quarantine(record: QuarantineRecord): Promise<void> {
    await this.manager.query(
      `INSERT INTO ${this.quarantinedMessages} (stream_seq, stream, subject, reason, sha256, bytes, detail) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (stream_seq) DO NOTHING`,
      [record.stream_seq, record.stream, record.subject, record.reason, record.sha256, record.bytes, record.detail],
    );
  }
}

/** `text` as a LIKE pattern that matches itself: `\`, `%` and `_` escaped (ESCAPE '\'). */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (special) => `\\${special}`);
}
