// Moved to @writ/runtime (the receipt service serializes per task too); re-exported so the executor's imports stay as they are.
export { TaskSerializer } from '@writ/runtime';
