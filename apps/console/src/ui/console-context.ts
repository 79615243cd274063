import { createContext } from 'preact';
import type { LiveUpdates } from '../api/live-updates.js';
import type { WritApi } from '../api/writ-api.js';
import type { Session } from '../session/session.js';

/** What every page reads: the session (who, which key), the API and the live-update signal. */
export interface ConsoleServices {
  readonly session: Session | undefined;
  readonly api: WritApi | undefined;
  readonly live: LiveUpdates | undefined;
}

export const ConsoleContext = createContext<ConsoleServices>({ session: undefined, api: undefined, live: undefined });
