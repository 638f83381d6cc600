// @ts-check
// How long a redline takes in Node: 50 sections of about 1 KB, one of about 100 KB, and one
// rewritten whole (the fallback). Prints milliseconds; asserts nothing (timings vary by
// machine).   node crates/web/bench/redline.mjs
import { redline } from '../assets/lib/redline.js';
import { edit, section, seeded } from '../tests/redline-samples.mjs';

/** The best of `rounds` runs of `work`, in ms. @param {() => void} work @param {number} rounds */
function best(work, rounds) {
  let fastest = Infinity;
  for (let i = 0; i < rounds; i++) {
    const start = performance.now();
    work();
    fastest = Math.min(fastest, performance.now() - start);
  }
  return fastest;
}

const rand = seeded(7);
const small = Array.from({ length: 50 }, () => {
  const old = section(rand, 1000);
  return [old, edit(rand, old, 0.08)];
});
const large = section(rand, 100_000);
const largeEdited = edit(rand, large, 0.02);
const rewritten = section(seeded(8), 100_000);

const first = best(() => small.forEach(([a, b]) => redline(a, b)), 1);
const figures = {
  '50 sections of ~1 KB, first run (cold)': first,
  '50 sections of ~1 KB': best(() => small.forEach(([a, b]) => redline(a, b)), 20),
  [`1 section of ${Math.round(large.length / 1000)} KB, 2% of words changed`]: best(() => redline(large, largeEdited), 5),
  '1 section of ~100 KB rewritten whole (fallback)': best(() => redline(large, rewritten), 3),
};
for (const [what, ms] of Object.entries(figures)) console.log(`${what}: ${ms.toFixed(1)} ms`);
