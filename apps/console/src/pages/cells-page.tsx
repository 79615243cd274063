import { useContext, useState } from 'preact/hooks';
import { ConsoleContext } from '../ui/console-context.js';
import { Empty, ErrorBox, Link, Loading, Mono, Section, Status, Time } from '../ui/components.js';
import { useLive } from '../ui/use-live.js';
import { CellFacts } from './task-page.js';

const CELL_STATUSES = ['', 'INVITED', 'PREPARING', 'ACTIVE', 'CHECKPOINTING', 'DOWNED', 'CLOSED', 'ARCHIVED'];

/** Every task's Lazarus cell, most recently changed first (`GET /v1/cells`). */
export function CellsPage() {
  const { api } = useContext(ConsoleContext);
  const [status, setStatus] = useState('');
  const cells = useLive(() => api!.cells(status === '' ? undefined : status), [status]);
  return (
    <>
      <h1>Cells</h1>
      <form class="filters">
        <label>
          Status
          <select value={status} onChange={(event) => setStatus((event.target as HTMLSelectElement).value)}>
            {CELL_STATUSES.map((value) => (
              <option value={value}>{value === '' ? 'any' : value}</option>
            ))}
          </select>
        </label>
      </form>
      <ErrorBox error={cells.error} />
      <Loading when={cells.loading} />
      {cells.data === undefined ? null : (
        <Section title={`${cells.data.length} cell(s)`} testId="cells">
          {cells.data.length === 0 ? (
            <Empty>No cell.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>Cell</th>
                  <th>Status</th>
                  <th>Task</th>
                  <th>Director</th>
                  <th>Seats</th>
                  <th>Executions</th>
                  <th>Last outcome</th>
                  <th>Updated</th>
                </tr>
              </thead>
              <tbody>
                {cells.data.map((cell) => (
                  <tr data-testid="cell-row">
                    <td>
                      <Link to={{ page: 'cell', id: cell.cell_id }}>
                        <Mono>{cell.cell_id}</Mono>
                      </Link>
                    </td>
                    <td>{cell.status === null ? <span class="muted">{String(cell['source'] ?? '')}</span> : <Status value={cell.status} />}</td>
                    <td>{typeof cell.task_id === 'string' ? <Link to={{ page: 'task', id: cell.task_id }}>{cell.task_id}</Link> : null}</td>
                    <td>{String(cell['director_id'] ?? '')}</td>
                    <td>{Array.isArray(cell['participants']) ? cell['participants'].length : 0}</td>
                    <td>{String(cell['executions'] ?? 0)}</td>
                    <td>{String(cell['last_execution_outcome'] ?? '')}</td>
                    <td>
                      <Time at={(cell['updated_at'] as string | undefined) ?? null} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </Section>
      )}
    </>
  );
}

export function CellPage(props: { readonly id: string }) {
  const { api } = useContext(ConsoleContext);
  const cell = useLive(() => api!.cell(props.id), [props.id]);
  return (
    <>
      <h1>
        Cell <Mono>{props.id}</Mono>
      </h1>
      <ErrorBox error={cell.error} />
      <Loading when={cell.loading} />
      {cell.data === undefined ? null : (
        <Section title="Cell" testId="cell">
          <CellFacts cell={cell.data} />
        </Section>
      )}
    </>
  );
}
