import type { EventStore } from '@writ/eventstore';
import { keyWindows, type KeyWindow } from '@writ/runtime';
import type { PrincipalKeyHistory } from '../application/profile-authority.js';

/** A principal's key windows, folded from its stream in the log each time (an unchanged stream costs one message get). */
export class LogPrincipalKeyHistory implements PrincipalKeyHistory {
  constructor(private readonly store: EventStore) {}

  async windows(principalId: string): Promise<readonly KeyWindow[]> {
    return keyWindows((await this.store.readEntity('principal', principalId)).map(({ event }) => event));
  }
}
