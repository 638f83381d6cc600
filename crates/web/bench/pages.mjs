// @ts-check
// Page timings of the web app in Debian's Chromium (Chromium's own clocks, through
// playwright-core): for each page, the time from navigation start to its heading on screen,
// with a cold cache (a new browser context) and a warm one (the same context again: the
// versioned assets come from the cache without a request). The ratio warm/cold shows what the
// immutable caching buys; the counts of requests that went over the network show it directly.
//   node crates/web/bench/pages.mjs [runs]     (REDLINE_BIN: the release binary)
import { Service, launch } from '../tests/support.mjs';

const runs = Number(process.argv[2] || 10);
const service = await Service.start();
const browser = await launch();
const token = await service.signedInUser();
// 200 documents, so the documents page shows a full first page (50) and a "Show more".
for (let i = 0; i < 200; i++) {
  await service.call('PUT', `/v1/documents/doc-${i}`, {
    json: { html: `<h1>Document ${i}</h1><p>Text ${i}.</p>`, title: `Document ${i}` },
    headers: { Authorization: `Bearer ${token}` },
  });
}

/** @param {number[]} xs */
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const pages = ['/signin', '/documents', '/usage', '/settings/keys'];
console.log(`page            cold ms  warm ms  warm/cold  requests cold→warm   (median of ${runs})`);
for (const path of pages) {
  /** @type {number[]} */
  const cold = [];
  /** @type {number[]} */
  const warm = [];
  const requests = [0, 0];
  for (let i = 0; i < runs; i++) {
    const context = await browser.newContext();
    if (path !== '/signin') {
      await context.addCookies([{ name: 'redline_session', value: token, url: service.base }]);
    }
    const page = await context.newPage();
    for (const n of [0, 1]) {
      const into = n === 0 ? cold : warm;
      await page.goto(`${service.base}${path}`);
      await page.locator('main h1').first().waitFor();
      // Requests that went over the network (a cache hit transfers 0 bytes), the page included.
      const [ms, count] = await page.evaluate(() => [
        performance.now(),
        performance.getEntriesByType('resource').filter((e) => /** @type {PerformanceResourceTiming} */ (e).transferSize > 0).length + 1,
      ]);
      into.push(ms);
      requests[n] = count;
    }
    await context.close();
  }
  const c = median(cold);
  const w = median(warm);
  console.log(`${path.padEnd(15)} ${c.toFixed(0).padStart(7)}  ${w.toFixed(0).padStart(7)}  ${(w / c).toFixed(2).padStart(9)}  ${String(requests[0]).padStart(8)} → ${requests[1]}`);
}
await browser.close();
await service.stop();
