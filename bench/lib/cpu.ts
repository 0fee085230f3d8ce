// CPU time spent during a phase, read from /proc (Linux only): the whole machine, the service's process, every
// PostgreSQL process (the bench's server does nothing else while it runs) and this process (the load generator and
// the webhook receiver). Per payment, it says where a payment's cost goes, and how many payments a second the
// machine's cores could carry at that cost, whatever the other figures' noise. A process that exits during the phase
// takes its time out of the process figures (not out of the machine's): the service's pool keeps its connections
// while the load lasts, but a phase without load in between would undercount PostgreSQL.
import { execFileSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { round } from './load.js';

export interface CpuSnapshot {
  machine: number;
  service: number;
  postgres: number;
  bench: number;
}

export interface CpuPerPayment {
  /** Milliseconds of CPU per payment. */
  machineMs: number;
  serviceMs: number;
  postgresMs: number;
  benchMs: number;
  /** Payments a second all the machine's cores would carry at machineMs each. */
  ceilingPerSecond: number;
}

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  return ticksPerSecond;
}

/** utime + stime of a process, in clock ticks; 0 once it is gone. */
async function processTicks(pid: string | number): Promise<{ name: string; ticks: number } | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return null;
  const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { name, ticks: Number(fields[11]) + Number(fields[12]) };
}

/** Null where /proc is not there to read (not Linux). */
export async function cpuSnapshot(servicePid: number): Promise<CpuSnapshot | null> {
  const stat = await readFile('/proc/stat', 'utf8').catch(() => null);
  if (stat === null) return null;
  // user nice system idle iowait irq softirq steal: busy is everything but idle and iowait.
  const t = stat.split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const machine = t[0]! + t[1]! + t[2]! + t[5]! + t[6]! + (t[7] ?? 0);
  let postgres = 0;
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const p = await processTicks(pid);
    if (p?.name === 'postgres') postgres += p.ticks;
  }
  return {
    machine,
    service: (await processTicks(servicePid))?.ticks ?? 0,
    postgres,
    bench: (await processTicks(process.pid))?.ticks ?? 0,
  };
}

/** The CPU of several service processes (`api` and `worker`) as one service: each snapshot taken for one of them. */
export function servicesTogether(snapshots: readonly (CpuSnapshot | null)[]): CpuSnapshot | null {
  if (snapshots.some((s) => s === null) || snapshots.length === 0) return null;
  const [first] = snapshots as CpuSnapshot[];
  return { ...first!, service: (snapshots as CpuSnapshot[]).reduce((sum, s) => sum + s.service, 0) };
}

export function cpuPerPayment(before: CpuSnapshot, after: CpuSnapshot, payments: number): CpuPerPayment {
  const ms = (key: keyof CpuSnapshot) => round(((after[key] - before[key]) * 1000) / clockTicks() / Math.max(1, payments), 2);
  const machineMs = ms('machine');
  return {
    machineMs,
    serviceMs: ms('service'),
    postgresMs: ms('postgres'),
    benchMs: ms('bench'),
    ceilingPerSecond: machineMs > 0 ? Math.round((cpus().length * 1000) / machineMs) : 0,
  };
}
