// Where an account's escalation incidents are kept: one small interface, so a shared store (several
// copies of Node-RED) can implement it beside the account's other state. Only an account that has
// an escalation node opens one: an account without writes nothing.
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { StoredBook } from './escalation';

export interface EscalationState {
  /** For log lines (a file's path). */
  readonly where: string;
  /** Undefined: nothing kept yet. */
  read(): Promise<StoredBook | undefined>;
  /** Resolves once the book is durable (a raising msg's `done` waits for it). */
  write(book: StoredBook): Promise<void>;
}

export function escalationPath(userDir: string, accountId: string): string {
  return join(userDir, 'bulkgate-escalation', `${accountId.replace(/[^\w.-]/g, '_')}.json`);
}

/**
 * One JSON file per account, replaced whole (written beside it, flushed, renamed over it): a crash leaves the old book
 * or the new one.
 */
export class EscalationFile implements EscalationState {
  constructor(readonly where: string) {}

  async read(): Promise<StoredBook | undefined> {
    let text: string;
    try {
      text = await readFile(this.where, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    const book = JSON.parse(text) as StoredBook;
    if (book?.version !== 1 || !Array.isArray(book.incidents) || !Array.isArray(book.retired))
      throw new Error(`${this.where} is not an escalation book`);
    return book;
  }

  async write(book: StoredBook): Promise<void> {
    if (!book.incidents.length && !book.retired.length) return rm(this.where, { force: true });
    await mkdir(dirname(this.where), { recursive: true, mode: 0o700 });
    const temporary = `${this.where}.${process.pid}.tmp`;
    // Owner-only: the raising msgs are in it.
    const file = await open(temporary, 'w', 0o600);
    try {
      await file.writeFile(JSON.stringify(book));
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, this.where);
  }
}

/** Node-RED without a user directory: in memory only (a restart forgets). */
export class EscalationMemory implements EscalationState {
  readonly where = 'memory';
  #book: string | undefined;
  async read(): Promise<StoredBook | undefined> {
    return this.#book === undefined ? undefined : (JSON.parse(this.#book) as StoredBook);
  }
  async write(book: StoredBook): Promise<void> {
    this.#book = JSON.stringify(book);
  }
}
