import { useContext, useState } from 'preact/hooks';
import { navigate } from '../router.js';
import { ConsoleContext } from '../ui/console-context.js';
import { Empty, ErrorBox, Link, Loading, Mono, Section, Status, Time } from '../ui/components.js';
import { useLive } from '../ui/use-live.js';

const TASK_STATUSES = ['', 'created', 'ready', 'running', 'blocked', 'completed', 'failed', 'cancelled'];

/** Look a task, an action or a receipt up by id: how an agent (no list across tasks) finds its work. */
function Lookup() {
  const [id, setId] = useState('');
  const go = (event: Event): void => {
    event.preventDefault();
    const value = id.trim();
    if (value === '') return;
    if (value.startsWith('rct-')) navigate({ page: 'receipt', id: value });
    else if (value.startsWith('tsk-')) navigate({ page: 'task', id: value });
    else navigate({ page: 'action', id: value });
  };
  return (
    <form class="inline" onSubmit={go} data-testid="lookup">
      <input placeholder="task (tsk-…), action request or receipt (rct-…) id" value={id} onInput={(event) => setId((event.target as HTMLInputElement).value)} />
      <button type="submit">Open</button>
    </form>
  );
}

export function TasksPage(props: { readonly status: string; readonly search: string }) {
  const { api } = useContext(ConsoleContext);
  const [search, setSearch] = useState(props.search);
  const tasks = useLive(() => api!.listTasks({ status: props.status, search: props.search }), [props.status, props.search]);

  return (
    <>
      <h1>Tasks</h1>
      <Lookup />
      <form
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          navigate({ page: 'tasks', status: props.status, search });
        }}
      >
        <label>
          Status
          <select value={props.status} onChange={(event) => navigate({ page: 'tasks', status: (event.target as HTMLSelectElement).value, search })} data-testid="task-status-filter">
            {TASK_STATUSES.map((status) => (
              <option value={status}>{status === '' ? 'any' : status}</option>
            ))}
          </select>
        </label>
        <label>
          Search
          <input type="search" value={search} placeholder="id, title, goal, owner, profile" onInput={(event) => setSearch((event.target as HTMLInputElement).value)} data-testid="task-search" />
        </label>
        <button type="submit">Filter</button>
      </form>
      <ErrorBox error={tasks.error} />
      <Loading when={tasks.loading} />
      {tasks.data === undefined ? null : (
        <Section title={`${tasks.data.items.length} task(s)${tasks.data.nextCursor === null ? '' : ', the newest'}`} testId="tasks">
          {tasks.data.items.length === 0 ? (
            <Empty>No task matches.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>Task</th>
                  <th>Title</th>
                  <th>Status</th>
                  <th>Owner</th>
                  <th>Profile</th>
                  <th>Last event</th>
                  <th>Updated</th>
                </tr>
              </thead>
              <tbody>
                {tasks.data.items.map((task) => (
                  <tr data-testid="task-row" data-task={task.task_id}>
                    <td>
                      <Link to={{ page: 'task', id: task.task_id }}>
                        <Mono>{task.task_id}</Mono>
                      </Link>
                    </td>
                    <td>{task.title}</td>
                    <td>
                      <Status value={task.status} />
                    </td>
                    <td>{task.owner_principal_id}</td>
                    <td>{task.policy_profile}</td>
                    <td>
                      <Mono>{task.last_event_type}</Mono>
                    </td>
                    <td>
                      <Time at={task.updated_at} />
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
