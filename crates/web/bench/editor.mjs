// @ts-check
// The editor's timings in Debian's Chromium, from the page's own User Timing marks (Chromium's
// clocks, read through playwright-core):
//   - first render: navigation start → `redline:document-shown` (the first sections on screen)
//     for a document of 1,000 sections (warm context: the assets are cached; the document and
//     its API calls are not);
//   - review: `redline:approval-required` (the event arrived) → `redline:redlines-shown` (every
//     change's redline in the page, after the browser painted) for 50 proposed changes, made by
//     the builtin model's `replace "X" with "Y"` over 50 sections.
// And, as the baseline each is compared with, the same page for a 10-section document and a
// 1-change review.
//   node crates/web/bench/editor.mjs [runs]     (REDLINE_BIN: the release binary)
import { Service, launch } from '../tests/support.mjs';

const runs = Number(process.argv[2] || 7);
const service = await Service.start();
const browser = await launch();
const token = await service.signedInUser();
const auth = { Authorization: `Bearer ${token}` };

/** @param {string} id @param {number} n @param {(i: number) => string} para */
async function documentOf(id, n, para) {
  const sections = ['<h1>Benchmark</h1>'];
  for (let i = 2; i <= n; i++) sections.push(para(i));
  const res = await service.call('PUT', `/v1/documents/${id}`, { json: { html: sections.join('\n') }, headers: auth });
  if (res.status !== 200) throw new Error(`PUT ${id}: ${res.status}`);
}

/** @param {number[]} xs */
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
await context.addCookies([{ name: 'redline_session', value: token, url: service.base }]);
const page = await context.newPage();
await page.goto(`${service.base}/documents`);
await page.locator('main h1').first().waitFor();

/** @param {string} id */
async function firstRender(id) {
  await page.goto(`${service.base}/documents/${id}`);
  await page.locator('article.document .section').first().waitFor();
  await page.waitForFunction(() => performance.getEntriesByName('redline:document-shown').length > 0);
  return page.evaluate(() => performance.getEntriesByName('redline:document-shown')[0].startTime);
}

/** @param {string} id @param {number} changes */
async function review(id, changes) {
  await page.goto(`${service.base}/documents/${id}`);
  await page.locator('article.document .section').first().waitFor();
  await page.getByLabel('Message to the AI').fill('replace "pine" with "oak"');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.waitForFunction(
    (n) => document.querySelectorAll('.change').length === n && performance.getEntriesByName('redline:redlines-shown').length > 0,
    changes,
  );
  const ms = await page.evaluate(() => {
    const start = performance.getEntriesByName('redline:approval-required').at(-1);
    const end = performance.getEntriesByName('redline:redlines-shown').at(-1);
    return start && end ? end.startTime - start.startTime : NaN;
  });
  await page.getByRole('button', { name: 'Reject all' }).click();
  await page.locator('.review-bar').waitFor({ state: 'detached' });
  return ms;
}

const words = (/** @type {number} */ i) => `<p>Paragraph ${i}: a pine stood by the road, and the travellers rested under it before they went on towards the hills.</p>`;
await documentOf('big', 1000, words);
await documentOf('small', 10, words);
await documentOf('fifty', 51, words);
await documentOf('one', 10, (i) => (i === 2 ? words(i) : `<p>Paragraph ${i}.</p>`));

/** @type {Record<string, number[]>} */
const times = { big: [], small: [], fifty: [], one: [] };
for (let i = 0; i < runs; i++) {
  times.small.push(await firstRender('small'));
  times.big.push(await firstRender('big'));
  times.one.push(await review('one', 1));
  times.fifty.push(await review('fifty', 50));
}
const row = (/** @type {string} */ what, /** @type {number} */ ms, /** @type {number} */ base) =>
  console.log(`${what.padEnd(44)} ${ms.toFixed(0).padStart(6)} ms   ×${(ms / base).toFixed(2)} of the baseline`);
console.log(`median of ${runs}`);
row('first render, 10 sections (baseline)', median(times.small), median(times.small));
row('first render, 1,000 sections', median(times.big), median(times.small));
row('approval_required → redlines, 1 change (baseline)', median(times.one), median(times.one));
row('approval_required → redlines, 50 changes', median(times.fifty), median(times.one));
await browser.close();
await service.stop();
