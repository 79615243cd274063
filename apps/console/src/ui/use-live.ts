import { useContext, useEffect, useRef, useState } from 'preact/hooks';
import { describeError } from '../api/api-error.js';
import { ConsoleContext } from './console-context.js';

export interface Loaded<T> {
  readonly data: T | undefined;
  readonly error: { readonly code: string; readonly message: string } | undefined;
  readonly loading: boolean;
  readonly reload: () => void;
}

/**
 * Loads `load()` now, and again on every live update (see LiveUpdates) and
 * whenever `deps` change. A read already running is not started twice; the
 * last answer stays on screen while the next one loads, so the page does not
 * flicker on each tick.
 */
export function useLive<T>(
  load: () => Promise<T>,
  deps: readonly unknown[],
  options: { readonly live?: boolean } = {},
): Loaded<T> {
  const { live } = useContext(ConsoleContext);
  const [state, setState] = useState<{ data: T | undefined; error: Loaded<T>['error']; loading: boolean }>({ data: undefined, error: undefined, loading: true });
  const running = useRef(false);
  const loader = useRef(load);
  loader.current = load;
  const generation = useRef(0);

  const run = (): void => {
    if (running.current) return;
    running.current = true;
    const mine = generation.current;
    loader
      .current()
      .then(
        (data) => {
          if (mine === generation.current) setState({ data, error: undefined, loading: false });
        },
        (error: unknown) => {
          if (mine === generation.current) setState((before) => ({ data: before.data, error: describeError(error), loading: false }));
        },
      )
      .finally(() => {
        running.current = false;
      });
  };

  useEffect(() => {
    generation.current += 1;
    running.current = false;
    setState({ data: undefined, error: undefined, loading: true });
    run();
    if (options.live === false || live === undefined) return undefined;
    return live.subscribe(run);
  }, deps);

  return { ...state, reload: run };
}
