import { useContext, useState } from 'preact/hooks';
import { navigate } from '../router.js';
import { ConsoleContext } from '../ui/console-context.js';
import { Empty, ErrorBox, Link, Loading, Mono, Section, Status, Time } from '../ui/components.js';
import { useLive } from '../ui/use-live.js';

/** `of` as the API takes it: undefined for the signed-in principal's own. */
const whose = (of: string) => (of === '' ? undefined : of);

/**
 * Conversations (issue 17, Hermit 13.6): each conversation's focus, pending
 * and unbound messages, folded by the projection from ingress's records and
 * bindings alone. A principal reads its own; a director may name any.
 */
export function ConversationsPage(props: { readonly of: string }) {
  const { api, session } = useContext(ConsoleContext);
  const [lookup, setLookup] = useState(props.of);
  const list = useLive(() => api!.focus(whose(props.of)), [props.of]);
  return (
    <>
      <h1>Conversations</h1>
      {session?.scope === 'all' ? (
        <form
          class="inline"
          onSubmit={(event) => {
            event.preventDefault();
            navigate({ page: 'conversations', of: lookup.trim() });
          }}
        >
          <input placeholder="principal id (empty: mine)" value={lookup} onInput={(event) => setLookup((event.target as HTMLInputElement).value)} data-testid="conversations-of" />
          <button type="submit">Show</button>
        </form>
      ) : null}
      <ErrorBox error={list.error} />
      <Loading when={list.loading} />
      {list.data === undefined ? null : (
        <Section title={`${list.data.principal_id}'s conversations`} note="A projection of ingress's records and bindings: ingress binds from the log, never from this view.">
          {list.data.focus.length === 0 ? <Empty>No conversation.</Empty> : null}
          <table>
            <thead>
              <tr>
                <th>Conversation</th>
                <th>Focus</th>
                <th>Pending</th>
                <th>Messages</th>
                <th>Updated</th>
              </tr>
            </thead>
            <tbody>
              {list.data.focus.map((row) => (
                <tr data-testid="conversation-row" data-conversation={row.conversation_id}>
                  <td>
                    <Link to={{ page: 'conversation', id: row.conversation_id, of: props.of }}>{row.conversation_id}</Link>
                  </td>
                  <td data-testid="conversation-focus">
                    {row.focus_task_id === null ? (
                      row.last_outcome_task_id === null ? (
                        'none'
                      ) : (
                        <>
                          none (last: <Link to={{ page: 'task', id: row.last_outcome_task_id }}>{row.last_outcome_task_id}</Link>, ended)
                        </>
                      )
                    ) : (
                      <Link to={{ page: 'task', id: row.focus_task_id }}>{row.focus_task_id}</Link>
                    )}
                  </td>
                  <td>{row.pending_ingress_ids.length + row.unbound_ingress_ids.length}</td>
                  <td>{row.message_count}</td>
                  <td>
                    <Time at={row.updated_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </Section>
      )}
    </>
  );
}

/** One conversation: each message (its stored text, secret-looking values redacted), where it was bound and why. */
export function ConversationPage(props: { readonly id: string; readonly of: string }) {
  const { api } = useContext(ConsoleContext);
  const history = useLive(() => api!.conversation(props.id, whose(props.of)), [props.id, props.of]);
  return (
    <>
      <h1>
        Conversation <Mono>{props.id}</Mono>
      </h1>
      <ErrorBox error={history.error} />
      <Loading when={history.loading} />
      {history.data === undefined ? null : (
        <Section title={`${history.data.principal_id}, ${history.data.messages.length} message(s)`} note="The session history is this projection; the log keeps each message's hash, never its text.">
          {history.data.messages.length === 0 ? <Empty>No message.</Empty> : null}
          <table>
            <tbody>
              {history.data.messages.map((message) => (
                <tr data-testid="message" data-ingress={message.ingress_id}>
                  <td>{message.conversation_seq}</td>
                  <td>
                    <Time at={message.recorded_at} />
                  </td>
                  <td>{message.text ?? <em>text not held</em>}</td>
                  <td data-testid="message-binding">
                    <Status value={message.resolution ?? 'unbound'} />{' '}
                    {message.task_id === null ? (message.candidates.length > 0 ? `between ${message.candidates.join(', ')}` : null) : <Link to={{ page: 'task', id: message.task_id }}>{message.task_id}</Link>}
                  </td>
                  <td>{message.rationale}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Section>
      )}
    </>
  );
}
