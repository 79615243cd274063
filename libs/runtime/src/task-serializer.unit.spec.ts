import { describe, expect, it } from 'vitest';
import { TaskSerializer } from './task-serializer.js';

/** A promise settled from outside, to order the steps of a test without timers. */
function gate(): { readonly promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('TaskSerializer', () => {
  it('given two pieces of work for one task, when the first is still running, then the second waits for it', async () => {
    const serializer = new TaskSerializer();
    const order: string[] = [];
    const first = gate();
    const a = serializer.run('task-1', async () => {
      order.push('a:start');
      await first.promise;
      order.push('a:end');
      return 'a';
    });
    const b = serializer.run('task-1', async () => {
      order.push('b');
      return 'b';
    });
    await Promise.resolve();
    expect(order).toEqual(['a:start']);
    first.open();
    expect(await Promise.all([a, b])).toEqual(['a', 'b']);
    expect(order).toEqual(['a:start', 'a:end', 'b']);
  });

  it('given work for two tasks, when the first task is blocked, then the other task runs meanwhile', async () => {
    const serializer = new TaskSerializer();
    const blocked = gate();
    const order: string[] = [];
    const a = serializer.run('task-1', async () => {
      await blocked.promise;
      order.push('task-1');
    });
    await serializer.run('task-2', async () => void order.push('task-2'));
    expect(order).toEqual(['task-2']);
    expect(serializer.size).toBe(1);
    blocked.open();
    await a;
    expect(order).toEqual(['task-2', 'task-1']);
  });

  it('given the first work fails, then its caller gets the failure, the next work of the task still runs, and nothing stays queued', async () => {
    const serializer = new TaskSerializer();
    const failing = serializer.run('task-1', () => Promise.reject(new Error('broken')));
    const next = serializer.run('task-1', () => Promise.resolve('ran'));
    await expect(failing).rejects.toThrow('broken');
    await expect(next).resolves.toBe('ran');
    expect(serializer.size).toBe(0);
  });
});
