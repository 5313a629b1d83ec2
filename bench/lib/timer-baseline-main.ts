// Baseline of P5: bare Node timers in a process of their own, due at the same moments as the
// daemon's deadlines (and so running under the same machine load). Usage:
//   node timer-baseline-main.js <first due, epoch ms> <count> <spread ms>
// Prints one JSON line: the lateness of each timer, in ms.
const [first, count, spread] = process.argv.slice(2).map(Number);
if (first === undefined || count === undefined || spread === undefined || ![first, count, spread].every(Number.isFinite)) {
  process.stderr.write('usage: timer-baseline-main <first due epoch ms> <count> <spread ms>\n');
  process.exit(2);
}
const now = (): number => performance.timeOrigin + performance.now();
const lateness: number[] = [];
for (let i = 0; i < count; i += 1) {
  const due = first + Math.floor((i * spread) / count);
  setTimeout(() => {
    lateness.push(now() - due);
    if (lateness.length === count) process.stdout.write(`${JSON.stringify(lateness)}\n`);
  }, due - now());
}
