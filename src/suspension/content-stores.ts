import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { InvalidArgumentError } from '../errors';
import { contentRef, type ContentStore } from './content';

/** Keeps media in this process's memory, for tests and a single process: nothing survives a restart. */
export class MemoryContentStore implements ContentStore {
  private readonly kept = new Map<string, Uint8Array>();

  async put(bytes: Uint8Array): Promise<string> {
    const ref = contentRef(bytes);
    this.kept.set(ref, Uint8Array.from(bytes));
    return ref;
  }

  async get(ref: string): Promise<Uint8Array | undefined> {
    const bytes = this.kept.get(ref);
    return bytes && Uint8Array.from(bytes);
  }
}

/** Options of {@link FileContentStore}. */
export interface FileContentStoreOptions {
  /** The directory media are kept in, one file per distinct content; made when first needed. */
  directory: string;
}

/**
 * Keeps media as files in one directory, named by the SHA-256 of their bytes (the same bytes
 * are kept once), written to a temporary name and renamed, so a reader never sees half a
 * file. Every process on the host that continues runs reads the same directory: the
 * companion of a `SqliteStore`. A fleet on PostgreSQL needs a store every host reaches.
 */
export class FileContentStore implements ContentStore {
  private readonly directory: string;

  constructor(options: FileContentStoreOptions) {
    if (typeof options?.directory !== 'string' || options.directory === '')
      throw new InvalidArgumentError('FileContentStore needs { directory }');
    this.directory = resolve(options.directory);
  }

  async put(bytes: Uint8Array): Promise<string> {
    const ref = contentRef(bytes);
    await mkdir(this.directory, { recursive: true });
    const temporary = join(this.directory, `.${ref}.${randomUUID()}.part`);
    await writeFile(temporary, bytes);
    await rename(temporary, join(this.directory, ref));
    return ref;
  }

  async get(ref: string): Promise<Uint8Array | undefined> {
    // Only names this store made: a reference read from a store row never leaves the directory.
    if (!/^sha256-[0-9a-f]{64}$/.test(ref)) return undefined;
    try {
      return new Uint8Array(await readFile(join(this.directory, ref)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }
}
