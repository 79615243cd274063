import { useEffect, useMemo, useState } from 'preact/hooks';
import { LiveUpdates, type LiveMode } from './api/live-updates.js';
import { WritApi } from './api/writ-api.js';
import { ActionPage } from './pages/action-page.js';
import { ApprovalPage } from './pages/approval-page.js';
import { ApprovalsPage } from './pages/approvals-page.js';
import { CellPage, CellsPage } from './pages/cells-page.js';
import { LoginPage } from './pages/login-page.js';
import { ConversationPage, ConversationsPage } from './pages/conversations-page.js';
import { MemoryPage, MemoryRecordPage } from './pages/memory-page.js';
import { ParticipantPage, ParticipantsPage } from './pages/participants-page.js';
import { ReceiptPage } from './pages/receipt-page.js';
import { TaskPage } from './pages/task-page.js';
import { TasksPage } from './pages/tasks-page.js';
import { href, navigate, useRoute, type Route } from './router.js';
import type { Session } from './session/session.js';
import { ConsoleContext } from './ui/console-context.js';

/** The published views the pages read (the changes feed refuses any other name: a task's timeline changes with its task row). */
const LIVE_VIEWS = ['tasks', 'actions', 'approvals', 'grants', 'receipts', 'cells', 'steps', 'attempts', 'artifacts', 'decisions', 'principals', 'memory'];

function Nav(props: { readonly session: Session; readonly route: Route; readonly mode: LiveMode; readonly onLogout: () => void }) {
  const { session, route } = props;
  const item = (to: Route, label: string, pages: readonly Route['page'][]) => (
    <a href={href(to)} class={pages.includes(route.page) ? 'current' : ''} data-testid={`nav-${to.page}`}>
      {label}
    </a>
  );
  return (
    <header class="top">
      <span class="brand">Writ</span>
      <nav>
        {item({ page: 'tasks', status: '', search: '' }, 'Tasks', ['tasks', 'task', 'action', 'receipt'])}
        {session.scope === 'all' ? item({ page: 'approvals' }, 'Approvals', ['approvals', 'approval']) : null}
        {session.scope === 'all' ? item({ page: 'cells' }, 'Cells', ['cells', 'cell']) : null}
        {item({ page: 'participants' }, 'Participants', ['participants', 'participant'])}
        {item({ page: 'memory', status: '' }, 'Memory', ['memory', 'memory-record'])}
        {item({ page: 'conversations', of: '' }, 'Conversations', ['conversations', 'conversation'])}
      </nav>
      <span class="who" data-testid="who">
        <span class={`live live-${props.mode}`} data-testid="live-mode" title="how this page learns about changes">
          {props.mode === 'sse' ? 'live (stream)' : props.mode === 'poll' ? 'live (every 2 s)' : 'connecting'}
        </span>
        {session.principalId} · {session.principal?.roles.join(', ') || (session.scope === 'all' ? 'operator' : 'own work')} ·{' '}
        <button type="button" class="link" onClick={props.onLogout} data-testid="logout">
          log out
        </button>
      </span>
    </header>
  );
}

function Page(props: { readonly route: Route; readonly session: Session }) {
  const { route } = props;
  switch (route.page) {
    case 'login':
    case 'tasks':
      return <TasksPage status={route.page === 'tasks' ? route.status : ''} search={route.page === 'tasks' ? route.search : ''} />;
    case 'task':
      return <TaskPage id={route.id} />;
    case 'action':
      return <ActionPage id={route.id} />;
    case 'approvals':
      return <ApprovalsPage />;
    case 'approval':
      return <ApprovalPage id={route.id} />;
    case 'receipt':
      return <ReceiptPage id={route.id} />;
    case 'cells':
      return <CellsPage />;
    case 'cell':
      return <CellPage id={route.id} />;
    case 'participants':
      return <ParticipantsPage />;
    case 'participant':
      return <ParticipantPage id={route.id} />;
    case 'memory':
      return <MemoryPage status={route.status} />;
    case 'memory-record':
      return <MemoryRecordPage id={route.id} />;
    case 'conversations':
      return <ConversationsPage of={route.of} />;
    case 'conversation':
      return <ConversationPage id={route.id} of={route.of} />;
  }
}

/** The console: the login until a session exists, then the pages with the session's API and live updates. */
export function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session | undefined>(undefined);
  const [mode, setMode] = useState<LiveMode>('connecting');
  const services = useMemo(() => {
    if (session === undefined) return { session: undefined, api: undefined, live: undefined };
    return { session, api: new WritApi(session.http), live: new LiveUpdates(session.http, { views: LIVE_VIEWS }) };
  }, [session]);

  useEffect(() => {
    const live = services.live;
    if (live === undefined) return undefined;
    const off = live.onMode(setMode);
    void live.start();
    return () => {
      off();
      live.stop();
    };
  }, [services]);

  if (session === undefined) {
    return (
      <LoginPage
        onSession={(next) => {
          setSession(next);
          if (route.page === 'login') navigate({ page: 'tasks', status: '', search: '' });
        }}
      />
    );
  }
  return (
    <ConsoleContext.Provider value={services}>
      <Nav
        session={session}
        route={route}
        mode={mode}
        onLogout={() => {
          setSession(undefined);
          navigate({ page: 'login' });
        }}
      />
      <main class="page">
        <Page route={route} session={session} />
      </main>
    </ConsoleContext.Provider>
  );
}
