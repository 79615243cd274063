import { unknownCommand } from '../shared/instant.js';
import { KnowledgeError } from './knowledge.errors.js';

/**
 * Knowledge is corrected, never erased (Hermit 6.1.3, 8.7): a command that
 * asks to delete, erase or purge gets its own code and says what to do
 * instead, rather than the generic unknown-command error.
 */
export function deletionForbidden(type: unknown, what: string, instead: string): void {
  if (typeof type === 'string' && /^(?:delete|erase|purge|remove|hard-delete)-/.test(type)) {
    throw new KnowledgeError('KNOWLEDGE_DELETION_FORBIDDEN', `${what} is never deleted: ${instead}`, { details: { type } });
  }
}

export function knowledgeUnknownCommand(type: unknown, context: string): never {
  return unknownCommand(type, context);
}
