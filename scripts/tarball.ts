/**
 * A gzip-compressed POSIX ustar archive of regular files, written without a `tar` binary so
 * the release builds the same bytes on every machine: entries in the given order, owner 0,
 * one fixed modification time, no gzip timestamp.
 */
import { gzipSync } from 'node:zlib';

export interface TarEntry {
  /** Path inside the archive, at most 100 bytes. */
  name: string;
  /** Permission bits, 0o755 for executables. */
  mode: number;
  content: Buffer;
}

const BLOCK = 512;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function header(entry: TarEntry, mtimeSeconds: number): Buffer {
  const name = Buffer.from(entry.name, 'utf8');
  if (name.length > 100) throw new Error(`tar entry name longer than 100 bytes: ${entry.name}`);
  const block = Buffer.alloc(BLOCK, 0);
  name.copy(block, 0);
  block.write(octal(entry.mode, 8), 100, 'ascii');
  block.write(octal(0, 8), 108, 'ascii');
  block.write(octal(0, 8), 116, 'ascii');
  block.write(octal(entry.content.length, 12), 124, 'ascii');
  block.write(octal(mtimeSeconds, 12), 136, 'ascii');
  block.write('        ', 148, 'ascii');
  block.write('0', 156, 'ascii');
  block.write('ustar\0', 257, 'ascii');
  block.write('00', 263, 'ascii');
  block.write('root', 265, 'ascii');
  block.write('root', 297, 'ascii');
  let sum = 0;
  for (const byte of block) sum += byte;
  // The checksum field: six octal digits, NUL, space.
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return block;
}

/** The archive's bytes, gzip-compressed. */
export function createTarGz(entries: readonly TarEntry[], mtimeSeconds: number): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    parts.push(header(entry, mtimeSeconds), entry.content);
    const padding = (BLOCK - (entry.content.length % BLOCK)) % BLOCK;
    if (padding > 0) parts.push(Buffer.alloc(padding, 0));
  }
  parts.push(Buffer.alloc(BLOCK * 2, 0));
  return gzipSync(Buffer.concat(parts), { level: 9 });
}
