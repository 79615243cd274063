import { useEffect, useState } from 'preact/hooks';

/**
 * Hash routes (`#/tasks/<id>`): the server serves one page at `/console/`,
 * and a route never reaches it (nor its logs, nor a Referer).
 */
export type Route =
  | { readonly page: 'login' }
  | { readonly page: 'tasks'; readonly status: string; readonly search: string }
  | { readonly page: 'task'; readonly id: string }
  | { readonly page: 'action'; readonly id: string }
  | { readonly page: 'approvals' }
  | { readonly page: 'approval'; readonly id: string }
  | { readonly page: 'receipt'; readonly id: string }
  | { readonly page: 'cells' }
  | { readonly page: 'cell'; readonly id: string }
  | { readonly page: 'participants' }
  | { readonly page: 'participant'; readonly id: string }
  /** `of`: whose conversations ('' for the signed-in principal's own). */
  | { readonly page: 'memory'; readonly status: string }
  | { readonly page: 'memory-record'; readonly id: string }
  | { readonly page: 'conversations'; readonly of: string }
  | { readonly page: 'conversation'; readonly id: string; readonly of: string };

export function parseRoute(hash: string): Route {
  const [path = '', query = ''] = hash.replace(/^#/, '').split('?');
  const parts = path.split('/').filter((part) => part !== '').map((part) => decodeURIComponent(part));
  const params = new URLSearchParams(query);
  const [page, id] = parts;
  switch (page) {
    case 'login':
      return { page: 'login' };
    case 'tasks':
      return id === undefined ? { page: 'tasks', status: params.get('status') ?? '', search: params.get('q') ?? '' } : { page: 'task', id };
    case 'actions':
      return id === undefined ? { page: 'tasks', status: '', search: '' } : { page: 'action', id };
    case 'approvals':
      return id === undefined ? { page: 'approvals' } : { page: 'approval', id };
    case 'receipts':
      return id === undefined ? { page: 'tasks', status: '', search: '' } : { page: 'receipt', id };
    case 'cells':
      return id === undefined ? { page: 'cells' } : { page: 'cell', id };
    case 'participants':
      return id === undefined ? { page: 'participants' } : { page: 'participant', id };
    case 'conversations':
      return id === undefined ? { page: 'conversations', of: params.get('of') ?? '' } : { page: 'conversation', id, of: params.get('of') ?? '' };
    case 'memory':
      return id === undefined ? { page: 'memory', status: params.get('status') ?? '' } : { page: 'memory-record', id };
    default:
      return { page: 'tasks', status: '', search: '' };
  }
}

export function href(route: Route): string {
  const enc = encodeURIComponent;
  switch (route.page) {
    case 'login':
      return '#/login';
    case 'tasks': {
      const query = new URLSearchParams();
      if (route.status !== '') query.set('status', route.status);
      if (route.search !== '') query.set('q', route.search);
      const qs = query.toString();
      return `#/tasks${qs === '' ? '' : `?${qs}`}`;
    }
    case 'task':
      return `#/tasks/${enc(route.id)}`;
    case 'action':
      return `#/actions/${enc(route.id)}`;
    case 'approvals':
      return '#/approvals';
    case 'approval':
      return `#/approvals/${enc(route.id)}`;
    case 'receipt':
      return `#/receipts/${enc(route.id)}`;
    case 'cells':
      return '#/cells';
    case 'cell':
      return `#/cells/${enc(route.id)}`;
    case 'participants':
      return '#/participants';
    case 'participant':
      return `#/participants/${enc(route.id)}`;
    case 'memory':
      return `#/memory${route.status === '' ? '' : `?status=${enc(route.status)}`}`;
    case 'memory-record':
      return `#/memory/${enc(route.id)}`;
    case 'conversations':
      return `#/conversations${route.of === '' ? '' : `?of=${enc(route.of)}`}`;
    case 'conversation':
      return `#/conversations/${enc(route.id)}${route.of === '' ? '' : `?of=${enc(route.of)}`}`;
  }
}

export function navigate(route: Route): void {
  window.location.hash = href(route);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const changed = (): void => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return route;
}
