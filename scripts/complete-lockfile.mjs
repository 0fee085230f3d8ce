#!/usr/bin/env node
// The npm registry this project's machines reach serves only some platform builds of packages with native
// binaries (anvil, litesvm, rollup). `npm install` then leaves the other platforms' optional packages out of
// package-lock.json, and `npm ci` refuses the lock file as out of sync. This adds those entries back, marked
// optional with the os/cpu/libc their names declare, so `npm ci` skips them on every other platform, as it would
// with a lock file written where the registry has them all. Run after `npm install` changes the lock file.
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const packages = lock.packages;

const OS = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openbsd', 'openharmony', 'sunos', 'aix'];
const CPU = [
  ['arm64', /arm64|aarch64/],
  ['x64', /x64|amd64|x86_64/],
  ['ia32', /ia32/],
  ['loong64', /loong64/],
  ['ppc64', /ppc64/],
  ['riscv64', /riscv64/],
  ['s390x', /s390x/],
  ['arm', /-arm-|gnueabihf|musleabihf|arm-eabi/],
];

function platformOf(name) {
  const base = name.split('/').pop();
  const os = OS.find((o) => base.includes(o));
  const cpu = CPU.find(([, re]) => re.test(base))?.[0];
  if (!os || !cpu) return null;
  const entry = { os: [os], cpu: [cpu] };
  if (os === 'linux') {
    if (base.includes('musl')) entry.libc = ['musl'];
    else if (base.includes('gnu')) entry.libc = ['glibc'];
  }
  return entry;
}

let added = 0;
for (const [location, pkg] of Object.entries(packages)) {
  for (const [dep, spec] of Object.entries(pkg.optionalDependencies ?? {})) {
    const nested = `${location ? `${location}/` : ''}node_modules/${dep}`;
    if (packages[nested] || packages[`node_modules/${dep}`]) continue;
    const platform = platformOf(dep);
    if (!platform) continue;
    packages[`node_modules/${dep}`] = { version: String(spec).replace(/^[\^~=]/, ''), ...platform, optional: true };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} platform entries`);
