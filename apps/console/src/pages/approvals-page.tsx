import { useContext } from 'preact/hooks';
import type { ApprovalRow } from '../api/rows.js';
import { ConsoleContext } from '../ui/console-context.js';
import { Empty, ErrorBox, Link, Loading, Mono, Section, Status, Time } from '../ui/components.js';
import { useLive } from '../ui/use-live.js';

function packetSummary(row: ApprovalRow): string {
  const packet = (row['packet'] ?? {}) as Record<string, unknown>;
  return String(packet['action_summary'] ?? row['approval_type'] ?? '');
}

function Rows(props: { readonly rows: readonly ApprovalRow[]; readonly testId: string }) {
  return (
    <table data-testid={props.testId}>
      <thead>
        <tr>
          <th>Approval</th>
          <th>Status</th>
          <th>Asks</th>
          <th>Risk</th>
          <th>Task</th>
          <th>Requested</th>
          <th>Expires / resolved</th>
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr data-testid="approval-row" data-approval={row.approval_id}>
            <td>
              <Link to={{ page: 'approval', id: row.approval_id }} testId="approval-link">
                <Mono>{row.approval_id}</Mono>
              </Link>
            </td>
            <td>
              <Status value={row.status} />
            </td>
            <td>{packetSummary(row)}</td>
            <td>{String(((row['packet'] ?? {}) as Record<string, unknown>)['risk_band'] ?? '')}</td>
            <td>
              <Link to={{ page: 'task', id: row.task_id }}>
                <Mono>{row.task_id}</Mono>
              </Link>
            </td>
            <td>
              <Time at={row.requested_at ?? null} />
            </td>
            <td>{row.status === 'pending' ? <Time at={row.expires_at ?? null} /> : <>{row.resolved_by ?? ''} <Time at={row.resolved_at ?? null} /></>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The inbox: pending approvals first (oldest first, as the API orders them), then the latest resolved ones. */
export function ApprovalsPage() {
  const { api, session } = useContext(ConsoleContext);
  const inbox = useLive(async () => {
    const [pending, all] = await Promise.all([api!.approvals('pending'), api!.approvals(undefined, 200)]);
    return { pending, resolved: all.filter((row) => row.status !== 'pending').reverse().slice(0, 50) };
  }, []);
  return (
    <>
      <h1>Approvals</h1>
      {session?.mayResolve === true ? null : <p class="note">You read the inbox; only a director may approve or deny.</p>}
      <ErrorBox error={inbox.error} />
      <Loading when={inbox.loading} />
      {inbox.data === undefined ? null : (
        <>
          <Section title={`Pending (${inbox.data.pending.length})`} testId="pending">
            {inbox.data.pending.length === 0 ? <Empty>Nothing waits for a decision.</Empty> : <Rows rows={inbox.data.pending} testId="pending-table" />}
          </Section>
          <Section title="Resolved" testId="resolved">
            {inbox.data.resolved.length === 0 ? <Empty>None yet.</Empty> : <Rows rows={inbox.data.resolved} testId="resolved-table" />}
          </Section>
        </>
      )}
    </>
  );
}
