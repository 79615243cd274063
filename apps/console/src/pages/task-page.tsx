import { useContext, useState } from 'preact/hooks';
import { describeError, hasCode } from '../api/api-error.js';
import type { GrantRow, RevokeReply, StepView, TaskEventRow } from '../api/rows.js';
import { actionStories, type ActionStory } from '../explain/action-story.js';
import { revokeGrant } from '../session/revoke-grant.js';
import { ConsoleContext } from '../ui/console-context.js';
import { Empty, ErrorBox, Facts, JsonView, Link, Loading, Mono, Section, Status, Time } from '../ui/components.js';
import { useLive } from '../ui/use-live.js';
import { TaskKnowledge } from './task-knowledge.js';

const TABS = ['explain', 'timeline', 'decisions', 'approvals', 'grants', 'executions', 'knowledge', 'artifacts', 'receipts', 'cell'] as const;
type Tab = (typeof TABS)[number];

function Story(props: { readonly story: ActionStory }) {
  const { story } = props;
  return (
    <article class="story" data-testid="story" data-attempt={story.attemptId} data-action={story.actionRequestId ?? ''}>
      <header>
        <Status value={story.status} testId="story-status" /> <strong>{story.what.summary || story.attemptId}</strong>{' '}
        {story.actionRequestId === null ? null : (
          <Link to={{ page: 'action', id: story.actionRequestId }}>
            <Mono>{story.actionRequestId}</Mono>
          </Link>
        )}
      </header>
      <Facts
        rows={[
          ['what', `${story.what.actionClass ?? '?'} on ${story.what.targets.join(', ') || 'nothing named'}${story.what.reversibility === null ? '' : ` (${story.what.reversibility})`}`],
          ['asked by', story.what.proposedBy === null ? null : `${story.what.proposedBy}${story.what.reason === null ? '' : `: “${story.what.reason}”`}`],
          ['why (policy)', story.why === null ? 'not evaluated yet' : `${story.why.outcome}, risk ${story.why.riskBand ?? '?'}: ${story.why.reasoning ?? story.why.rules.join(', ')}`],
          ['profile', story.why?.profile ?? null],
          [
            'authority',
            story.approval === null
              ? story.why?.outcome === 'allow'
                ? 'policy allowed it directly (no approval needed)'
                : null
              : (
                  <>
                    approval <Link to={{ page: 'approval', id: story.approval.approvalId }}>{story.approval.approvalId}</Link> <Status value={story.approval.status} />
                    {story.approval.resolvedBy === null ? null : ` by ${story.approval.resolvedBy}`}
                    {story.approval.note === null ? null : ` (“${story.approval.note}”)`}
                    {story.approval.cause === null ? null : ` — ${story.approval.cause}`}
                  </>
                ),
          ],
          [
            'grant',
            story.grant === null
              ? null
              : `${story.grant.grantId}: ${story.grant.paths.join(', ') || 'no paths'}${story.grant.hosts.length > 0 ? `, hosts ${story.grant.hosts.join(', ')}` : ''}; ${story.grant.usesClaimed}/${story.grant.maxUses ?? '?'} use(s)${story.grant.revoked ? ', revoked' : ''}${story.grant.refused.length > 0 ? `, refused ${story.grant.refused.join(', ')}` : ''}`,
          ],
          [
            'what ran',
            story.execution === null
              ? null
              : `${story.execution.outcome}${story.execution.exitCode === null ? '' : `, exit ${story.execution.exitCode}`}${story.execution.durationMs === null ? '' : ` after ${Math.round(story.execution.durationMs)} ms`}, network ${story.execution.network ?? '?'}`,
          ],
          ['what changed', story.execution === null ? null : story.execution.changedFiles.map((file) => `${file.change} ${file.path}`).join(', ') || 'no file changed'],
          [
            'receipts',
            story.receipts.length === 0
              ? null
              : (
                  <>
                    {story.receipts.map((receipt) => (
                      <div>
                        <Link to={{ page: 'receipt', id: receipt.receiptId }}>{receipt.receiptId}</Link> <Status value={receipt.resultCode} /> {receipt.summary}
                      </div>
                    ))}
                  </>
                ),
          ],
          ['undoable', story.receipts.find((receipt) => receipt.rollback !== null)?.rollback ?? null],
        ]}
      />
    </article>
  );
}

/** Revoke, for a director, on a grant still active: signed in this browser, checked by the approval service; the executor refuses every later use. */
function RevokeGrant(props: { readonly grant: GrantRow; readonly onRevoked: () => void }) {
  const { api, session } = useContext(ConsoleContext);
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [reply, setReply] = useState<RevokeReply | undefined>(undefined);
  const [error, setError] = useState<{ code: string; message: string } | undefined>(undefined);
  if (session === undefined || !session.mayResolve) return null;
  const revoke = async (): Promise<void> => {
    setBusy(true);
    setError(undefined);
    try {
      setReply(await revokeGrant(api!, session, props.grant, reason));
      props.onRevoked();
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="revoke" data-testid="revoke-grant">
      {reply === undefined ? (
        <>
          <input value={reason} placeholder="why (recorded in grant.revoked)" onInput={(event) => setReason((event.target as HTMLInputElement).value)} data-testid="revoke-reason" maxLength={1000} />
          <button type="button" class="deny" disabled={busy} onClick={() => void revoke()} data-testid="revoke">
            {busy ? 'Revoking…' : 'Revoke'}
          </button>
        </>
      ) : (
        <span class="ok" data-testid="revoke-reply">
          <Status value={reply.status} /> by {reply.revoked_by} at <Time at={reply.revoked_at} />
        </span>
      )}
      <ErrorBox error={error} />
    </div>
  );
}

function Timeline(props: { readonly events: readonly TaskEventRow[] }) {
  return (
    <table data-testid="timeline">
      <thead>
        <tr>
          <th>#</th>
          <th>Event</th>
          <th>Entity</th>
          <th>By</th>
          <th>At</th>
          <th>Payload</th>
        </tr>
      </thead>
      <tbody>
        {props.events.map((event) => (
          <tr data-event={event.event_type}>
            <td>{event.task_seq}</td>
            <td>
              <Mono>{event.event_type}</Mono>
            </td>
            <td>
              <Mono>{event.entity_id}</Mono>
            </td>
            <td>{event.actor_id}</td>
            <td>
              <Time at={event.occurred_at} />
            </td>
            <td>
              <JsonView value={event.payload} label="payload" />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function StepsAndAttempts(props: { readonly taskId: string }) {
  const { api } = useContext(ConsoleContext);
  const steps = useLive(() => api!.stepViews(props.taskId), [props.taskId]);
  return (
    <>
      <ErrorBox error={steps.error} />
      {(steps.data ?? []).length === 0 ? <Empty>No step yet.</Empty> : null}
      {(steps.data ?? []).map((step: StepView) => (
        <div class="step">
          <h3>
            <Status value={step.status} /> {step.title ?? step.step_id} <Mono>{step.step_id}</Mono>
          </h3>
          <table>
            <thead>
              <tr>
                <th>Attempt</th>
                <th>Status</th>
                <th>Details</th>
              </tr>
            </thead>
            <tbody>
              {step.attempts.map((attempt) => (
                <tr>
                  <td>
                    <Mono>{attempt.attempt_id}</Mono>
                  </td>
                  <td>
                    <Status value={attempt.status} />
                  </td>
                  <td>
                    <JsonView value={attempt} label="attempt" />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
    </>
  );
}

export function TaskPage(props: { readonly id: string }) {
  const { api, session } = useContext(ConsoleContext);
  const [tab, setTab] = useState<Tab>('explain');
  const task = useLive(() => api!.taskWithTimeline(props.id), [props.id]);
  const extra = useLive(
    async () => {
      const [decisions, grants, artifacts, cell] = await Promise.all([
        api!.decisions(props.id),
        api!.grants(props.id),
        api!.artifacts(props.id),
        api!.cell(props.id).catch((error: unknown) => (hasCode(error, 'PROJECTION_NOT_FOUND') ? null : Promise.reject(error))),
      ]);
      return { decisions, grants, artifacts, cell };
    },
    [props.id],
  );
  const view = task.data;
  const stories = view === undefined ? [] : actionStories(view.events);
  const approvals = view === undefined ? [] : view.events.filter((event) => event.event_type.startsWith('approval.'));
  const receipts = view === undefined ? [] : view.events.filter((event) => event.event_type === 'receipt.issued');

  return (
    <>
      <h1>
        Task <Mono>{props.id}</Mono>
      </h1>
      <ErrorBox error={task.error} />
      <Loading when={task.loading} />
      {view === undefined ? null : (
        <>
          <Section title={view.title} testId="task">
            <Facts
              rows={[
                ['status', <Status value={view.status} testId="task-status" />],
                ['goal', view.goal],
                ['owner', view.owner_principal_id],
                ['policy profile', view.policy_profile],
                ['events', `${view.events.length} (last: ${view.last_event_type})`],
                ['created', <Time at={view.created_at} />],
                ['updated', <Time at={view.updated_at} />],
              ]}
            />
          </Section>
          <nav class="tabs">
            {TABS.map((name) => (
              <button type="button" class={name === tab ? 'current' : ''} onClick={() => setTab(name)} data-testid={`tab-${name}`}>
                {name}
              </button>
            ))}
          </nav>
          <ErrorBox error={extra.error} />
          {tab === 'explain' ? (
            <Section title="What happened, why, under whose authority" testId="explain" note="The answers of `writ explain`, per action, from the task's events. Each receipt's signature, chain and log inclusion are checked on its receipt page.">
              {stories.length === 0 ? <Empty>No action yet.</Empty> : stories.map((story) => <Story story={story} />)}
            </Section>
          ) : null}
          {tab === 'timeline' ? (
            <Section title="Timeline" note="Every event of the task in log order (a grant's JWS is withheld).">
              <Timeline events={view.events} />
            </Section>
          ) : null}
          {tab === 'decisions' ? (
            <Section title="Decisions">
              {(extra.data?.decisions ?? []).length === 0 ? <Empty>No decision yet.</Empty> : null}
              <table>
                <tbody>
                  {(extra.data?.decisions ?? []).map((decision) => (
                    <tr>
                      <td>{decision.task_seq}</td>
                      <td>{String(decision['decision_type'] ?? (decision as Record<string, unknown>)['decision'] ?? '')}</td>
                      <td>
                        <JsonView value={decision} label="decision" />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </Section>
          ) : null}
          {tab === 'approvals' ? (
            <Section title="Approvals">
              {approvals.length === 0 ? <Empty>No approval was needed.</Empty> : null}
              <table>
                <tbody>
                  {approvals.map((event) => (
                    <tr>
                      <td>
                        <Mono>{event.event_type}</Mono>
                      </td>
                      <td>
                        {session?.scope === 'all' ? <Link to={{ page: 'approval', id: event.entity_id }}>{event.entity_id}</Link> : <Mono>{event.entity_id}</Mono>}
                      </td>
                      <td>{String(event.payload['resolved_by'] ?? event.payload['requested_by'] ?? '')}</td>
                      <td>
                        <Time at={event.occurred_at} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </Section>
          ) : null}
          {tab === 'grants' ? (
            <Section
              title="Grants"
              note={
                session?.mayResolve === true
                  ? `An active grant is revoked here: signed with ${session.principalId}'s key (${session.kid}) in this browser, as writ grant revoke signs it; the approval service checks it and the executor refuses every later use.`
                  : 'A director revokes an active grant here (or with writ grant revoke).'
              }
            >
              {(extra.data?.grants ?? []).length === 0 ? <Empty>No grant.</Empty> : null}
              <table>
                <tbody>
                  {(extra.data?.grants ?? []).map((grant) => (
                    <tr data-testid="grant-row" data-grant={grant.grant_id}>
                      <td>
                        <Mono>{grant.grant_id}</Mono>
                      </td>
                      <td>
                        <Status value={grant.status} />
                      </td>
                      <td>{grant.action_class}</td>
                      <td>
                        expires <Time at={grant.expires_at} />
                      </td>
                      <td>
                        <JsonView value={grant} label="grant" />
                      </td>
                      <td>{grant.status === 'active' ? <RevokeGrant grant={grant} onRevoked={() => extra.reload()} /> : null}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </Section>
          ) : null}
          {tab === 'executions' ? (
            <Section title="Steps, attempts and executions">
              <StepsAndAttempts taskId={props.id} />
            </Section>
          ) : null}
          {tab === 'knowledge' ? <TaskKnowledge taskId={props.id} events={view.events} /> : null}
          {tab === 'artifacts' ? (
            <Section title="Artifacts" note="Content-addressed outputs and evidence (the bytes are in the artifact store, by sha256).">
              {(extra.data?.artifacts ?? []).length === 0 ? <Empty>No artifact.</Empty> : null}
              <table>
                <tbody>
                  {(extra.data?.artifacts ?? []).map((artifact) => (
                    <tr>
                      <td>
                        <Mono>{artifact.artifact_id}</Mono>
                      </td>
                      <td>{artifact.kind}</td>
                      <td>{String(artifact['task_local_alias'] ?? '')}</td>
                      <td>
                        <Mono>{String(artifact.sha256 ?? '').slice(0, 16)}</Mono>
                      </td>
                      <td>{String(artifact['size_bytes'] ?? artifact['byte_size'] ?? '')}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </Section>
          ) : null}
          {tab === 'receipts' ? (
            <Section title="Receipts" note="Open one to verify it here: signature, hash chain and inclusion in the transparency log.">
              {receipts.length === 0 ? <Empty>No receipt yet.</Empty> : null}
              <table>
                <tbody>
                  {receipts.map((event) => {
                    const receipt = event.payload['receipt'] as Record<string, unknown>;
                    return (
                      <tr data-testid="receipt-row">
                        <td>
                          <Link to={{ page: 'receipt', id: String(receipt['receipt_id']) }} testId="receipt-link">
                            {String(receipt['receipt_id'])}
                          </Link>
                        </td>
                        <td>{String(receipt['receipt_class'])}</td>
                        <td>
                          <Status value={String(receipt['result_code'])} />
                        </td>
                        <td>{String(receipt['result_summary'] ?? '')}</td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </Section>
          ) : null}
          {tab === 'cell' ? (
            <Section title="Cell">
              {extra.data?.cell === null || extra.data?.cell === undefined ? <Empty>No cell for this task yet.</Empty> : <CellFacts cell={extra.data.cell} />}
            </Section>
          ) : null}
        </>
      )}
    </>
  );
}

export function CellFacts(props: { readonly cell: Record<string, unknown> }) {
  const cell = props.cell;
  const participants = Array.isArray(cell['participants']) ? (cell['participants'] as Record<string, unknown>[]) : [];
  return (
    <>
      <Facts
        rows={[
          ['cell', <Mono>{String(cell['cell_id'])}</Mono>],
          ['status', <Status value={(cell['status'] as string | null) ?? null} />],
          ['director', (cell['director_id'] as string | null) ?? null],
          ['image', (cell['image'] as string | null) ?? null],
          ['network', (cell['network_mode'] as string | null) ?? null],
          ['executions', String(cell['executions'] ?? 0)],
          ['last outcome', (cell['last_execution_outcome'] as string | null) ?? null],
          ['expires', <Time at={cell['active_expires_at'] as string | null} />],
          ['last heartbeat', <Time at={cell['last_heartbeat_at'] as string | null} />],
        ]}
      />
      {participants.length === 0 ? null : (
        <table>
          <thead>
            <tr>
              <th>Participant</th>
              <th>Principal</th>
              <th>Role</th>
              <th>Status</th>
            </tr>
          </thead>
          <tbody>
            {participants.map((seat) => (
              <tr>
                <td>{String(seat['participant_id'] ?? '')}</td>
                <td>{String(seat['principal_id'] ?? '')}</td>
                <td>{String(seat['role'] ?? '')}</td>
                <td>{String(seat['status'] ?? '')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <JsonView value={cell} label="row" />
    </>
  );
}
