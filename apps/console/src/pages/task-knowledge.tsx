import { useContext, useState } from 'preact/hooks';
import { describeError } from '../api/api-error.js';
import type { AttemptRow, Json, TaskEventRow } from '../api/rows.js';
import { ConsoleContext } from '../ui/console-context.js';
import { Empty, ErrorBox, Facts, JsonView, Link, Mono, RefLink, Section, Status, Time } from '../ui/components.js';
import { useLive } from '../ui/use-live.js';

/**
 * The task's knowledge (issue 17): where it came from (a follow-up's
 * continuation anchor, a fork's parent), its working state, its beliefs and
 * the context pack each attempt was proposed under. Read from the
 * projection's views; the secrets they withhold stay withheld here.
 */
export function TaskKnowledge(props: { readonly taskId: string; readonly events: readonly TaskEventRow[] }) {
  const { api } = useContext(ConsoleContext);
  const knowledge = useLive(
    async () => {
      const [workingState, beliefs, steps] = await Promise.all([
        api!.workingState(props.taskId),
        api!.beliefs(props.taskId),
        api!.stepViews(props.taskId),
      ]);
      return { workingState, beliefs, attempts: steps.flatMap((step) => step.attempts) };
    },
    [props.taskId],
  );
  const created = props.events.find((event) => event.event_type === 'task.created')?.payload;
  return (
    <>
      <ErrorBox error={knowledge.error} />
      <Origin created={created} />
      <Section title="Working state" testId="working-state" note="Task-local, bounded by the limits it was opened with; an entry marked secret is listed with its value withheld.">
        {knowledge.data?.workingState === null || knowledge.data === undefined ? (
          <Empty>No working state yet.</Empty>
        ) : (
          <>
            <Facts
              rows={[
                ['revision', String(knowledge.data.workingState.revision)],
                ['limits', Object.entries(knowledge.data.workingState.limits).map(([name, value]) => `${name} ${value}`).join(', ')],
                ['last revised by', knowledge.data.workingState.last_revised_by],
                ['compactions', String(knowledge.data.workingState.compactions)],
                ['updated', <Time at={knowledge.data.workingState.updated_at} />],
              ]}
            />
            <table>
              <tbody>
                {knowledge.data.workingState.entries.map((entry) => (
                  <tr data-testid="working-state-entry" data-key={entry.key}>
                    <td>
                      <Mono>{entry.key}</Mono>
                    </td>
                    <td>{entry.kind}</td>
                    <td>{entry.value_withheld === true ? <em>withheld (secret)</em> : <Value value={entry.value} />}</td>
                    <td>{(entry.refs ?? []).join(', ')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </Section>
      <Section title="Beliefs" testId="beliefs" note="Every belief ever asserted, with its trust tier and evidence; contradicted, superseded and revoked ones stay, marked.">
        {(knowledge.data?.beliefs ?? []).length === 0 ? <Empty>No belief.</Empty> : null}
        <table>
          <tbody>
            {(knowledge.data?.beliefs ?? []).map((belief) => (
              <tr data-testid="belief" data-belief={belief.belief_id}>
                <td>
                  <Mono>{belief.belief_id}</Mono>
                </td>
                <td>{belief.claim_withheld ? <em>withheld (secret)</em> : belief.claim}</td>
                <td>
                  <Status value={belief.status} />
                  {belief.needs_review ? ' needs review' : ''}
                </td>
                <td data-testid="belief-tier">
                  {belief.trust_tier}
                  {belief.epistemic_type === null ? '' : ` (${belief.epistemic_type})`}, {Math.round(belief.confidence * 100)}%
                </td>
                <td>{belief.evidence_refs.map((ref) => `${ref.kind}:${ref.id}`).join(', ')}</td>
                <td>{belief.asserted_by}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Context packs" testId="context-packs" note="What each attempt was proposed under: compiled by the orchestrator from the log, stored by its SHA-256, served only when its bytes hash to it.">
        {(knowledge.data?.attempts ?? []).filter(hasPack).length === 0 ? <Empty>No context pack yet.</Empty> : null}
        {(knowledge.data?.attempts ?? []).filter(hasPack).map((attempt) => (
          <ContextPack attempt={attempt} />
        ))}
      </Section>
    </>
  );
}

const hasPack = (attempt: AttemptRow) => typeof attempt['context_pack_sha256'] === 'string';

/** A scalar as text; anything structured as a JSON view. */
function Value(props: { readonly value: unknown }) {
  const { value } = props;
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? <span>{String(value)}</span> : <JsonView value={value} label="value" />;
}

/** A follow-up names the ended outcome it continues; a fork names its parent. */
function Origin(props: { readonly created: Readonly<Record<string, unknown>> | undefined }) {
  const anchor = props.created?.['continuation_anchor'] as Readonly<Record<string, unknown>> | undefined;
  const parent = props.created?.['parent_task_id'] as string | undefined;
  if (anchor === undefined && parent === undefined) return null;
  return (
    <Section title="Origin" testId="origin">
      <Facts
        rows={
          anchor !== undefined
            ? [
                ['continues', <Link to={{ page: 'task', id: String(anchor['anchor_task_id']) }}>{String(anchor['anchor_task_id'])}</Link>],
                ['its outcome', `${String(anchor['outcome_status'])}: ${String(anchor['outcome_summary'])}`],
                ['chosen because', String(anchor['selection_reason'])],
                ['evidence', ((anchor['source_artifact_refs'] as readonly string[] | undefined) ?? []).map((ref) => <RefLink value={ref} />)],
              ]
            : [['forked from', <Link to={{ page: 'task', id: parent! }}>{parent!}</Link>]]
        }
      />
    </Section>
  );
}

function ContextPack(props: { readonly attempt: AttemptRow }) {
  const { api } = useContext(ConsoleContext);
  const [pack, setPack] = useState<Json | undefined>(undefined);
  const [error, setError] = useState<{ code: string; message: string } | undefined>(undefined);
  const { attempt } = props;
  const show = async (): Promise<void> => {
    try {
      setPack(await api!.contextPack(attempt.attempt_id));
    } catch (failure) {
      setError(describeError(failure));
    }
  };
  const items = (pack?.['items'] as readonly { readonly section: string; readonly source: { readonly kind: string; readonly id: string } }[] | undefined) ?? [];
  return (
    <article class="story" data-testid="context-pack" data-attempt={attempt.attempt_id}>
      <header>
        <Mono>{attempt.attempt_id}</Mono> <Status value={attempt.status} /> pack <Mono>{String(attempt['context_pack_sha256']).slice(0, 16)}</Mono>, {String(attempt['context_pack_byte_size'] ?? '?')} bytes{' '}
        {pack === undefined ? (
          <button type="button" onClick={() => void show()} data-testid="show-pack">
            Show
          </button>
        ) : null}
      </header>
      <ErrorBox error={error} />
      {pack === undefined ? null : (
        <>
          <ol data-testid="pack-items">
            {items.map((item) => (
              <li>
                {item.section}: <Mono>{`${item.source.kind}:${item.source.id}`}</Mono>
              </li>
            ))}
          </ol>
          <JsonView value={pack} label="pack" />
        </>
      )}
    </article>
  );
}
