import { hasErrorCode } from '@writ/contracts';

/** A participant stream that kept changing: request/reply has no redelivery, so the adapter tries the whole verification again (bounded). */
const ROUNDS = 3;

export async function withConflictRetries<T>(run: () => Promise<T>): Promise<T> {
  for (let round = 1; ; round++) {
    try {
      return await run();
    } catch (error) {
      if (!hasErrorCode(error, 'INGRESS_PARTICIPANT_BUSY', 'EVENTSTORE_CONFLICT') || round >= ROUNDS) throw error;
    }
  }
}
