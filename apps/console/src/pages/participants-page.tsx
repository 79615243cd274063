import { useContext, useState } from 'preact/hooks';
import { navigate } from '../router.js';
import { ConsoleContext } from '../ui/console-context.js';
import { Empty, ErrorBox, Facts, JsonView, Link, Loading, Mono, Section, Status } from '../ui/components.js';
import { useLive } from '../ui/use-live.js';

interface Seat {
  readonly cellId: string;
  readonly taskId: string | null;
  readonly participantId: string;
  readonly principalId: string;
  readonly role: string;
  readonly status: string;
}

/**
 * Who takes part: the seats of every cell (Lazarus roles director, executor,
 * observer, guest, substitute) for a wide reader, and any principal looked up
 * by id (roles, keys, revoked kids). An agent sees its own principal.
 */
export function ParticipantsPage() {
  const { api, session } = useContext(ConsoleContext);
  const [lookup, setLookup] = useState('');
  const seats = useLive(async (): Promise<Seat[] | null> => {
    if (session?.scope !== 'all') return null;
    const cells = await api!.cells();
    return cells.flatMap((cell) =>
      (Array.isArray(cell['participants']) ? (cell['participants'] as Record<string, unknown>[]) : []).map((seat) => ({
        cellId: cell.cell_id,
        taskId: typeof cell.task_id === 'string' ? cell.task_id : null,
        participantId: String(seat['participant_id'] ?? ''),
        principalId: String(seat['principal_id'] ?? ''),
        role: String(seat['role'] ?? ''),
        status: String(seat['status'] ?? ''),
      })),
    );
  }, [session?.scope]);
  return (
    <>
      <h1>Participants</h1>
      <form
        class="inline"
        onSubmit={(event) => {
          event.preventDefault();
          if (lookup.trim() !== '') navigate({ page: 'participant', id: lookup.trim() });
        }}
      >
        <input placeholder="principal id" value={lookup} onInput={(event) => setLookup((event.target as HTMLInputElement).value)} />
        <button type="submit">Show principal</button>{' '}
        {session === undefined ? null : <Link to={{ page: 'participant', id: session.principalId }}>me ({session.principalId})</Link>}
      </form>
      <ErrorBox error={seats.error} />
      <Loading when={seats.loading} />
      {seats.data === null || seats.data === undefined ? null : (
        <Section title={`Cell seats (${seats.data.length})`} testId="seats">
          {seats.data.length === 0 ? (
            <Empty>No cell has a seat yet.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>Participant</th>
                  <th>Principal</th>
                  <th>Role</th>
                  <th>Status</th>
                  <th>Cell</th>
                </tr>
              </thead>
              <tbody>
                {seats.data.map((seat) => (
                  <tr>
                    <td>
                      <Mono>{seat.participantId}</Mono>
                    </td>
                    <td>
                      <Link to={{ page: 'participant', id: seat.principalId }}>{seat.principalId}</Link>
                    </td>
                    <td>{seat.role}</td>
                    <td>
                      <Status value={seat.status} />
                    </td>
                    <td>
                      <Link to={{ page: 'cell', id: seat.cellId }}>{seat.cellId}</Link>
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

export function ParticipantPage(props: { readonly id: string }) {
  const { api } = useContext(ConsoleContext);
  const principal = useLive(() => api!.principal(props.id), [props.id]);
  const row = principal.data;
  const keys = (row?.keys ?? []) as Record<string, unknown>[];
  return (
    <>
      <h1>
        Principal <Mono>{props.id}</Mono>
      </h1>
      <ErrorBox error={principal.error} />
      <Loading when={principal.loading} />
      {row === undefined ? null : (
        <Section title={row.principal_id} testId="principal">
          <Facts
            rows={[
              ['type', String(row.principal_type ?? row['type'] ?? '')],
              ['roles', row.roles.join(', ') || 'none'],
              ['status', <Status value={String(row['status'] ?? 'active')} />],
              ['revoked keys', (row.revoked_kids ?? []).join(', ') || 'none'],
            ]}
          />
          {keys.length === 0 ? (
            <Empty>No key.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>Key id</th>
                  <th>Public key (x)</th>
                </tr>
              </thead>
              <tbody>
                {keys.map((key) => (
                  <tr>
                    <td>
                      <Mono>{String(key['kid'] ?? '')}</Mono>
                    </td>
                    <td>
                      <Mono>{String(key['x'] ?? '')}</Mono>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <JsonView value={row} label="row" />
        </Section>
      )}
    </>
  );
}
