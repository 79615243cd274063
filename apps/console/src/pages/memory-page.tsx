import { useContext } from 'preact/hooks';
import type { MemoryRow } from '../api/rows.js';
import { navigate } from '../router.js';
import { ConsoleContext } from '../ui/console-context.js';
import { Empty, ErrorBox, Facts, JsonView, Link, Loading, Mono, RefLink, Section, Status, Time } from '../ui/components.js';
import { useLive } from '../ui/use-live.js';

const MEMORY_STATUSES = ['', 'active', 'invalidated', 'revoked', 'expired'];

const claimOf = (row: MemoryRow) => (row.claim_withheld ? <em>withheld (secret)</em> : row.claim);

/**
 * Durable memory (issue 17, Hermit 8.7, 15.5): every record a governed
 * memory_write promoted, with its trust tier, evidence and the authority it
 * was promoted under; invalidated ones stay, marked. Read only: a record is
 * promoted or invalidated by a memory_write action (`writ memory`).
 */
export function MemoryPage(props: { readonly status: string }) {
  const { api } = useContext(ConsoleContext);
  const records = useLive(() => api!.memory(props.status === '' ? undefined : props.status), [props.status]);
  return (
    <>
      <h1>Memory</h1>
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <select value={props.status} onChange={(event) => navigate({ page: 'memory', status: (event.target as HTMLSelectElement).value })} data-testid="memory-status">
          {MEMORY_STATUSES.map((status) => (
            <option value={status}>{status === '' ? 'every status' : status}</option>
          ))}
        </select>
      </form>
      <ErrorBox error={records.error} />
      <Loading when={records.loading} />
      <Section title="Records" note="Promoted only through policy (and approval where the profile says), each with its receipt; never deleted.">
        {(records.data ?? []).length === 0 ? <Empty>No memory record.</Empty> : null}
        <table>
          <thead>
            <tr>
              <th>Record</th>
              <th>Claim</th>
              <th>Scope</th>
              <th>Trust</th>
              <th>Status</th>
              <th>Task</th>
              <th>Receipt</th>
            </tr>
          </thead>
          <tbody>
            {(records.data ?? []).map((row) => (
              <tr data-testid="memory-row" data-memory={row.memory_id}>
                <td>
                  <Link to={{ page: 'memory-record', id: row.memory_id }}>{row.memory_id}</Link>
                </td>
                <td>{claimOf(row)}</td>
                <td>
                  <Mono>{row.scope}</Mono>
                </td>
                <td>{row.trust_tier}</td>
                <td>
                  <Status value={row.status} testId="memory-status-value" />
                </td>
                <td>
                  <Link to={{ page: 'task', id: row.task_id }}>{row.task_id}</Link>
                </td>
                <td>
                  <RefLink value={row.receipt_ref} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
    </>
  );
}

export function MemoryRecordPage(props: { readonly id: string }) {
  const { api } = useContext(ConsoleContext);
  const record = useLive(() => api!.memoryRecord(props.id), [props.id]);
  const row = record.data;
  return (
    <>
      <h1>
        Memory <Mono>{props.id}</Mono>
      </h1>
      <ErrorBox error={record.error} />
      <Loading when={record.loading} />
      {row === undefined ? null : (
        <Section title="Record" testId="memory-record">
          <Facts
            rows={[
              ['status', <Status value={row.status} testId="memory-record-status" />],
              ['claim', claimOf(row)],
              ['scope', <Mono>{row.scope}</Mono>],
              ['trust tier', row.trust_tier],
              ['evidence', row.evidence_refs.map((ref) => `${ref.kind}:${ref.id}`).join(', ') || null],
              ['why promoted', row.promotion_reason],
              ['source', row.source_kind === null ? null : `${row.source_kind}:${row.source_id ?? '?'}`],
              ['retention', row.retention_class],
              ['promoted by', row.promoted_by],
              ['task', <Link to={{ page: 'task', id: row.task_id }}>{row.task_id}</Link>],
              ['policy', row.policy_result_ref],
              ['approval', row.approval_ref],
              ['receipt', <RefLink value={row.receipt_ref} />],
              ['invalidated', row.invalidated_at === null ? null : <>by {row.invalidated_by} at <Time at={row.invalidated_at} />: {row.invalidation_reason}</>],
              ['invalidation receipt', <RefLink value={row.invalidation_receipt_ref} />],
              ['updated', <Time at={row.updated_at} />],
            ]}
          />
          <JsonView value={row} label="row" />
        </Section>
      )}
    </>
  );
}
