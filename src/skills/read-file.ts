import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** What reading a skill's file gave: its bytes, or why it gave none. */
export type FileRead = { bytes: Buffer } | { problem: 'not-regular' | 'too-large' } | { failed: unknown };

/**
 * The bytes of `file` when it is a regular file of at most `maxBytes`. Opened without
 * blocking (`O_NONBLOCK`): a named pipe or a device in a skill folder would otherwise hold the
 * whole process in `open` until a writer came. The type is read from the opened descriptor
 * (`fstat`), so the file checked is the file read, whatever the path points at meanwhile.
 */
export function readRegularFile(file: string, maxBytes: number): FileRead {
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { problem: 'not-regular' };
    if (stat.size > maxBytes) return { problem: 'too-large' };
    const bytes = Buffer.alloc(stat.size);
    const read = readSync(fd, bytes, 0, stat.size, 0);
    return { bytes: bytes.subarray(0, read) };
  } catch (error) {
    return { failed: error };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
