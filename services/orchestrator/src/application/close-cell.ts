/** `<root>.cmd.executor.close-cell`: the payload is the contract's (libs/contracts). */
export { CloseCell, CloseCellReason } from '@writ/contracts';

/** The command's msg id: one close per task, whichever instance or redelivery publishes it. */
export function closeCellMsgId(taskId: string): string {
  return `${taskId}:cmd:executor.close-cell`;
}
