// For e2e tests that run `stableroute` processes against a database of their own and a webhook receiver: registers
// the set-up and the teardown (every process started through `start` is killed, then the receiver and the database go).
import { afterAll, beforeAll } from 'vitest';
import { createTestDatabase, type TestDatabase } from './db.js';
import { killAll, startService, type ServiceProcess } from './process.js';
import { startReceiver, type Receiver } from './receiver.js';

export interface ServiceFixture {
  readonly db: TestDatabase;
  readonly receiver: Receiver;
  start(args: string[], env: Record<string, string>): ServiceProcess;
}

export function serviceFixture(webhookSecret: string): ServiceFixture {
  let db: TestDatabase | undefined;
  let receiver: Receiver | undefined;
  const started: ServiceProcess[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
    receiver = await startReceiver(webhookSecret);
  });
  afterAll(async () => {
    await killAll(started);
    await receiver?.close();
    await db?.drop();
  });
  return {
    get db() {
      return db!;
    },
    get receiver() {
      return receiver!;
    },
    start(args, env) {
      const service = startService(args, env);
      started.push(service);
      return service;
    },
  };
}
