// The audit log's anchor file (decision 187): one `seq hash` line per committed record, appended by every process
// that appends records, kept where whoever can write the database cannot (another disk or host, WORM storage, a file
// with the append-only attribute). A line is written only after its record committed, so the file never names a
// record that rolled back; a process that dies between the commit and the write leaves a record without its line,
// so the file is a lower bound of the log: each line must be in the log, not each record in the file.
import { createReadStream } from 'node:fs';
import { appendFile, stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';

export interface AnchorLine {
  seq: bigint;
  hash: string;
}

const LINE = /^([0-9]{1,19}) ([0-9a-f]{64})$/;

export function anchorLine(seq: bigint, hash: string): string {
  return `${seq} ${hash}\n`;
}

/**
 * Appends whole lines: the file is opened with O_APPEND and each line goes out in one write, so the lines of several
 * processes never interleave. A failure is reported, never thrown: the record has committed.
 */
export async function appendAnchorLine(file: string, line: string): Promise<void> {
  try {
    await appendFile(file, line, { flag: 'a' });
  } catch (error) {
    process.emitWarning(`the audit record "${line.trim()}" could not be appended to AUDIT_ANCHOR_FILE ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`, {
      code: 'STABLEROUTE_AUDIT_ANCHOR',
    });
  }
}

/** Start-up: the anchor file can be appended to (created if missing), or the process does not start. */
export async function checkAnchorFile(file: string): Promise<void> {
  await appendFile(file, '', { flag: 'a' });
}

/** How many bytes the file holds now (0 if it does not exist yet): the lines a proof started now must find in the log. */
export async function anchorBytes(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
}

/**
 * The file's lines within its first `bytes` bytes, a batch at a time (bounded memory, whatever the file's length).
 * A line that is not `seq hash` (a write cut short by a full disk) is counted in `unreadable`, not checked.
 */
export async function readAnchor(file: string, bytes: number, batchLines: number, onBatch: (lines: AnchorLine[]) => Promise<void>): Promise<{ unreadable: number }> {
  let unreadable = 0;
  if (bytes === 0) return { unreadable };
  const input = createInterface({ input: createReadStream(file, { start: 0, end: bytes - 1, encoding: 'utf8' }), crlfDelay: Infinity });
  let batch: AnchorLine[] = [];
  for await (const text of input) {
    if (text === '') continue;
    const match = LINE.exec(text);
    if (match === null) {
      unreadable += 1;
      continue;
    }
    batch.push({ seq: BigInt(match[1]!), hash: match[2]! });
    if (batch.length === batchLines) {
      await onBatch(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await onBatch(batch);
  return { unreadable };
}
