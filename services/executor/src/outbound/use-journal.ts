import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { RunAction } from '@writ/contracts';
import type { JournalEntry, UseJournal } from '../application/ports.js';

const ENTRY = /^(use-[0-9a-f]{40})\.json$/;

/**
 * The executor's host journal: `<cellsRoot>/.journal/<executorId>/<useId>.json` holds the
 * RunAction of every use this process is about to claim or is running, written before the
 * claim and removed once its completion is in the log. A restarted process (same executor
 * id, same host) reconciles what is left (application/reconcile-use.ts). The RunAction holds
 * the grant JWS, so the directory is root-only (0700) like the cells root's task directories.
 */
export class FileUseJournal implements UseJournal {
  readonly #dir: string;

  constructor(cellsRoot: string, executorId: string) {
    this.#dir = path.join(cellsRoot, '.journal', executorId);
  }

  async write(useId: string, command: RunAction): Promise<void> {
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    const file = path.join(this.#dir, `${useId}.json`);
    // Unique per writer: two executors of one process (or host) may replace the same file at once.
    const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temporary, JSON.stringify(command), { mode: 0o600 });
    await rename(temporary, file);
  }

  async remove(useId: string): Promise<void> {
    await rm(path.join(this.#dir, `${useId}.json`), { force: true });
  }

  /** Entries left by an earlier run of this executor; an unreadable or invalid entry is dropped. */
  async list(): Promise<JournalEntry[]> {
    let names: string[];
    try {
      names = await readdir(this.#dir);
    } catch {
      return [];
    }
    const entries: JournalEntry[] = [];
    for (const name of names.sort()) {
      const match = ENTRY.exec(name);
      if (match === null) continue;
      try {
        const parsed = RunAction.safeParse(JSON.parse(await readFile(path.join(this.#dir, name), 'utf8')));
        if (parsed.success) entries.push({ useId: match[1] as string, command: parsed.data });
        else await this.remove(match[1] as string);
      } catch {
        // A torn write cannot happen (tmp + rename); anything else unreadable is left for the operator.
      }
    }
    return entries;
  }
}
