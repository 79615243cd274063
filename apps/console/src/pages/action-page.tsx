import { useContext } from 'preact/hooks';
import { navigate } from '../router.js';
import { ConsoleContext } from '../ui/console-context.js';
import { ErrorBox, Facts, Link, Loading, Mono, Section, Status, Time } from '../ui/components.js';
import { useLive } from '../ui/use-live.js';

/** One action request's status (`GET /v1/actions/<id>`), live, with links to what decided and ran it. */
export function ActionPage(props: { readonly id: string }) {
  const { api } = useContext(ConsoleContext);
  const action = useLive(() => api!.action(props.id), [props.id]);
  const row = action.data;
  return (
    <>
      <h1>
        Action <Mono>{props.id}</Mono>
      </h1>
      <ErrorBox error={action.error} />
      <Loading when={action.loading} />
      {row === undefined ? null : (
        <Section title="Status" testId="action">
          <Facts
            rows={[
              ['status', <Status value={row.status} testId="action-status" />],
              ['reason code', row.reason_code === null ? null : <Mono>{row.reason_code}</Mono>],
              ['proposed by', row.principal_id],
              ['action class', row.action_class],
              ['policy', row.policy_outcome === null ? null : `${row.policy_outcome} (risk ${row.risk_band ?? '?'})`],
              ['task', row.task_id === null ? null : <Link to={{ page: 'task', id: row.task_id }}>{row.task_id}</Link>],
              ['approval', row.approval_id === null ? null : <Link to={{ page: 'approval', id: row.approval_id }}>{row.approval_id}</Link>],
              ['grant', row.grant_id === null ? null : <Mono>{row.grant_id}</Mono>],
              ['receipt', row.receipt_id === null ? null : <Link to={{ page: 'receipt', id: row.receipt_id }}>{row.receipt_id}</Link>],
              ['received', <Time at={row.received_at} />],
              ['updated', <Time at={row.updated_at} />],
            ]}
          />
          {row.task_id === null ? null : (
            <button type="button" onClick={() => navigate({ page: 'task', id: row.task_id as string })}>
              Open the task
            </button>
          )}
        </Section>
      )}
    </>
  );
}
