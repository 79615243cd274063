import { describe, expect, it } from 'vitest';
import { href, parseRoute, type Route } from './router.js';

describe('hash routes', () => {
  const routes: Route[] = [
    { page: 'login' },
    { page: 'tasks', status: 'running', search: 'build it' },
    { page: 'tasks', status: '', search: '' },
    { page: 'task', id: 'tsk-1' },
    { page: 'action', id: 'ar-1' },
    { page: 'approvals' },
    { page: 'approval', id: 'apv-1' },
    { page: 'receipt', id: 'rct-1' },
    { page: 'cells' },
    { page: 'cell', id: 'tsk-1' },
    { page: 'participants' },
    { page: 'participant', id: 'director-1' },
    { page: 'memory', status: '' },
    { page: 'memory', status: 'invalidated' },
    { page: 'memory-record', id: 'mem-1' },
    { page: 'conversations', of: '' },
    { page: 'conversations', of: 'agent-1' },
    { page: 'conversation', id: 'conv-1', of: '' },
    { page: 'conversation', id: 'conv 2', of: 'agent-1' },
  ];
  for (const route of routes) {
    it(`given ${JSON.stringify(route)}, when written and read back, then it is the same route`, () => {
      expect(parseRoute(href(route))).toEqual(route);
    });
  }

  it('given an unknown or empty hash, when read, then it is the task list', () => {
    expect(parseRoute('#/nowhere')).toEqual({ page: 'tasks', status: '', search: '' });
    expect(parseRoute('')).toEqual({ page: 'tasks', status: '', search: '' });
  });
});
