/** Figures the kernel keeps about a process: CPU time, resident memory, machine load. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';

const TICKS_PER_S = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** User and system (kernel) CPU time of every thread of `pid`, in microseconds (from /proc/<pid>/stat). */
export function cpuTimes(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the parenthesised command name, which may itself hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime, stime (fields 14 and 15)
  return { user: (Number(fields[11]) * 1e6) / TICKS_PER_S, system: (Number(fields[12]) * 1e6) / TICKS_PER_S };
}

/** User + system CPU time of every thread of `pid`, in microseconds. */
export function cpuMicros(pid: number): number {
  const t = cpuTimes(pid);
  return t.user + t.system;
}

/** Resident set size of `pid` in MB (VmRSS), and its peak (VmHWM). */
export function rssMb(pid: number): { rss_mb: number; peak_rss_mb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rss_mb: Math.round(kb('VmRSS') / 1024), peak_rss_mb: Math.round(kb('VmHWM') / 1024) };
}

/** The 1-minute load average, to print beside every figure (the machine is shared). */
export function load1(): number {
  return Math.round(loadavg()[0]! * 100) / 100;
}
