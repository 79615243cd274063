import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { CliError } from './cli-errors.js';

/** Reads a JSON file (relative to `cwd`); CLI_FILE_UNREADABLE when it cannot be read or parsed. */
export async function readJsonFile(cwd: string, path: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(resolve(cwd, path), 'utf8');
  } catch (cause) {
    throw new CliError('CLI_FILE_UNREADABLE', `cannot read the ${what} ${path}: ${(cause as NodeJS.ErrnoException).code ?? 'error'}`, { cause });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new CliError('CLI_FILE_UNREADABLE', `the ${what} ${path} is not JSON`, { cause });
  }
}
