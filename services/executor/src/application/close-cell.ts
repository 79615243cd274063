/** `<root>.cmd.executor.close-cell`: the payload is the contract's (libs/contracts). */
export { CloseCell } from '@writ/contracts';
