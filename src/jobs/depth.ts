// How many jobs wait and run in each of our queues, for the job-queue-depth gauge. pg-boss counts them with one
// indexed query per queue and state bound.
import type PgBoss from 'pg-boss';
import { EXECUTION_DEAD_LETTER_QUEUE, EXECUTION_QUEUE } from './queue.js';

export const QUEUES = [EXECUTION_QUEUE, EXECUTION_DEAD_LETTER_QUEUE] as const;

export interface QueueDepth {
  queue: string;
  /** Created or waiting for a retry. */
  waiting: number;
  active: number;
}

export async function queueDepths(boss: PgBoss): Promise<QueueDepth[]> {
  return Promise.all(
    QUEUES.map(async (queue) => {
      const [waiting, notDone] = await Promise.all([
        boss.getQueueSize(queue, { before: 'active' }),
        boss.getQueueSize(queue, { before: 'completed' }),
      ]);
      return { queue, waiting, active: Math.max(0, notDone - waiting) };
    }),
  );
}
