// @ts-check
// The editor as a person uses it, in Debian's Chromium against the real binary: with the
// builtin model, and with the repository's OpenAI-wire fake (crates/fake-llm) scripted to
// propose known edits.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeLlm, Service, assertAccessible, email, launch, mailedLink, openPage, repo, screenshot, watchOrigins } from './support.mjs';

/** @type {import('playwright-core').Browser} */
let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

const PASSWORD = 'correct horse battery';

/**
 * A new account, signed in in `context` (the cookie) and for API calls from the test (the token).
 * @param {Service} service
 * @param {import('playwright-core').BrowserContext} context
 */
async function account(service, context) {
  const address = email('editor');
  const signup = await service.call('POST', '/v1/auth/signup', { json: { email: address, password: PASSWORD } });
  assert.equal(signup.status, 201, JSON.stringify(signup.body));
  const login = await context.request.post(`${service.base}/v1/auth/login`, { data: { email: address, password: PASSWORD } });
  assert.equal(login.status(), 200);
  const token = (await login.json()).token;
  /** @param {string} method @param {string} path @param {unknown} [json] */
  const call = (method, path, json) => service.call(method, path, { json, headers: { Authorization: `Bearer ${token}` } });
  return { address, call };
}

/** A document of the given sections, stored through the API, titled by its `<h1>` (else its id). */
async function createDocument(/** @type {(m: string, p: string, j?: unknown) => Promise<any>} */ call, /** @type {string} */ id, /** @type {string[]} */ sections) {
  const heading = sections.find((s) => s.startsWith('<h1'));
  const title = heading ? heading.replace(/<[^>]+>/g, '') : id;
  const res = await call('PUT', `/v1/documents/${id}`, { html: sections.join('\n'), title });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

/**
 * Opens a document in the editor and waits for its title.
 * @param {import('playwright-core').Page} page
 * @param {Service} service
 * @param {string} id
 * @param {string} title
 */
async function openEditor(page, service, id, title) {
  await page.goto(`${service.base}/documents/${id}`);
  await page.locator('.editor-head').getByRole('heading', { name: title, level: 1 }).waitFor();
}

/** The sections' ids of a stored document, in order. */
async function chunkIds(/** @type {(m: string, p: string) => Promise<any>} */ call, /** @type {string} */ id) {
  const res = await call('GET', `/v1/documents/${id}`);
  return [...String(res.body.html).matchAll(/data-chunk-id="([^"]+)"/g)].map((m) => m[1]);
}

/** The text of the stored document. */
async function storedText(/** @type {(m: string, p: string) => Promise<any>} */ call, /** @type {string} */ id) {
  const res = await call('GET', `/v1/documents/${id}`);
  return String(res.body.html).replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
}

describe('the editor with the builtin model', () => {
  /** @type {Service} */
  let service;
  before(async () => {
    service = await Service.start();
  });
  after(async () => {
    await service?.stop();
  });

  test('edits a section in place, keeps it over a reload, and makes a conflicting save a choice', async () => {
    const { page, context, guard } = await openPage(browser);
    const { call } = await account(service, context);
    await createDocument(call, 'notes', ['<h1>Field notes</h1>', '<p>The first line of notes.</p>', '<p>The second line.</p>']);
    await openEditor(page, service, 'notes', 'Field notes');

    // A skip link reaches the chat from the keyboard, past the document.
    await page.getByRole('link', { name: 'Skip to the chat' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.activeElement?.id === 'chat-message');
    // Edit is shown without a hover (phones have none).
    await page.mouse.move(0, 0);
    const opacity = await page.getByRole('button', { name: 'Edit section 3' }).evaluate((el) => getComputedStyle(el).opacity);
    assert.equal(opacity, '1');
    // Edit section 2; the edit is kept in the tab until it is saved.
    await page.getByRole('button', { name: 'Edit section 2' }).click();
    const box = page.getByRole('textbox', { name: 'Section 2' });
    await box.waitFor();
    // The toolbar holds its controls only: never a copy of the section's text left over from
    // the section as it was shown before Edit.
    const toolbar = page.getByRole('toolbar', { name: 'Formatting of section 2' });
    assert.doesNotMatch((await toolbar.textContent()) || '', /first line/, 'no stale copy of the text in the toolbar');
    assert.equal(await page.locator('.section.editing .section-body').count(), 1, 'one body being edited');
    await box.click();
    await page.keyboard.press('End');
    await page.keyboard.type(' Mine, unsaved.');
    await page.getByText('Unsaved', { exact: true }).waitFor();
    assert.equal(await page.evaluate(() => localStorage.length), 0, 'nothing in localStorage');
    await page.reload();
    await page.getByRole('textbox', { name: 'Section 2' }).waitFor();
    assert.match((await page.getByRole('textbox', { name: 'Section 2' }).textContent()) || '', /Mine, unsaved\./, 'the edit survives a reload');
    await page.getByRole('textbox', { name: 'Section 2' }).click();

    // Leaving with it asks first.
    /** @type {string[]} */
    const dialogs = [];
    page.on('dialog', (d) => {
      dialogs.push(d.type());
      d.dismiss();
    });
    await page.close({ runBeforeUnload: true });
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(dialogs, ['beforeunload'], 'a warning stops the person leaving');

    // Another client saves section 2 and section 3 meanwhile: the save is a choice.
    const page2 = page;
    const ids = await chunkIds(call, 'notes');
    const stored = await call('GET', '/v1/documents/notes');
    const theirs = String(stored.body.html)
      .replace('The first line of notes.', 'Their first line.')
      .replace('The second line.', 'Their second line.');
    assert.equal((await call('PUT', '/v1/documents/notes', { html: theirs, base_version_id: stored.body.version_id })).status, 200);
    await page2.getByRole('button', { name: 'Save' }).click();
    const conflict = page2.getByRole('alertdialog');
    await conflict.waitFor();
    assert.match((await conflict.textContent()) || '', /Their first line\./);
    assert.match((await conflict.textContent()) || '', /Mine, unsaved\./);
    await assertAccessible(page2, 'editor with a conflict');
    await screenshot(page2, 'editor-conflict');
    await page2.getByRole('button', { name: 'Keep mine over theirs' }).click();
    await page2.getByText('Saved.', { exact: true }).waitFor();
    const text = await storedText(call, 'notes');
    assert.match(text, /The first line of notes\. Mine, unsaved\./, 'mine is kept');
    assert.match(text, /Their second line\./, 'their change to another section stays');
    assert.equal((await chunkIds(call, 'notes')).join(), ids.join(), 'the sections keep their ids');

    // Formatting keys, then a save with Ctrl+S.
    await page2.getByRole('button', { name: 'Edit section 3' }).click();
    await page2.getByRole('textbox', { name: 'Section 3' }).click();
    await page2.keyboard.press('End');
    await page2.keyboard.press('Shift+Control+ArrowLeft');
    await page2.keyboard.press('Shift+Control+ArrowLeft');
    await page2.keyboard.press('Control+B');
    await page2.getByText('Unsaved', { exact: true }).waitFor();
    await page2.keyboard.press('Control+S');
    await page2.getByText('Unsaved', { exact: true }).waitFor({ state: 'detached' });
    await page2.getByText('Saved.', { exact: true }).waitFor();
    const saved = await call('GET', '/v1/documents/notes');
    assert.match(String(saved.body.html), /<(b|strong)>[^<]*line[^<]*<\/(b|strong)>/, 'Ctrl+B made the word bold');

    // Taking theirs drops mine only after the person chose it.
    await page2.getByRole('button', { name: 'Edit section 3' }).click();
    await page2.getByRole('textbox', { name: 'Section 3' }).click();
    await page2.keyboard.type('Doomed ');
    const now = await call('GET', '/v1/documents/notes');
    const theirs2 = String(now.body.html).replace('Their second', 'Their newer second');
    assert.equal((await call('PUT', '/v1/documents/notes', { html: theirs2, base_version_id: now.body.version_id })).status, 200);
    await page2.getByRole('button', { name: 'Save' }).click();
    await page2.getByRole('alertdialog').waitFor();
    await page2.getByRole('button', { name: 'Use theirs, drop my edit' }).click();
    await page2.getByRole('alertdialog').waitFor({ state: 'detached' });
    assert.match((await page2.locator('article.document').textContent()) || '', /Their newer second/);
    assert.doesNotMatch(await storedText(call, 'notes'), /Doomed/);
    guard.check();
    await context.close();
  });

  test('asks the AI, reviews its redlines by keyboard and buttons, then versions, undo and export', async () => {
    const { page, context, guard } = await openPage(browser, { width: 1400, height: 900 });
    const { address, call } = await account(service, context);
    await createDocument(call, 'fables', [
      '<h1>Fables</h1>',
      '<p>The quick brown fox jumps over the lazy dog.</p>',
      '<p>A fox and a <b>crow</b> met by the river.</p>',
      '<p>Every fox <span style="color: rgb(200, 0, 0)">knows</span> the way home.</p>',
    ]);
    await openEditor(page, service, 'fables', 'Fables');
    // The document's own (sanitized) styles apply, through the CSSOM, without a policy breach.
    const color = await page.locator('article.document span', { hasText: 'knows' }).evaluate((el) => getComputedStyle(el).color);
    assert.equal(color, 'rgb(200, 0, 0)');

    await page.getByLabel('Message to the AI').fill('replace "fox" with "cat"');
    await page.getByRole('button', { name: 'Send' }).click();
    const bar = page.getByRole('region', { name: "Review of the AI's changes" });
    await bar.waitFor();
    assert.match((await bar.textContent()) || '', /The AI proposes 3 changes\./);
    // Its steps were told in words as they came.
    const steps = (await page.locator('.steps li').allTextContents()).join(' | ');
    assert.match(steps, /Searching the document for “fox”|Reading section/, steps);
    // It waits for the person, and says so: no progress bar, no "working".
    await page.getByText('The AI is waiting for your review: decide on each proposed change, then Finish.').waitFor();
    // Its words say proposed, not done, until the changes are applied.
    await page.getByText('The AI proposes the changes marked in the document. Nothing is applied until you accept it.').waitFor();
    assert.equal(await page.locator('.message.ai.job').getByText(/^Replaced/).count(), 0);
    assert.equal(await page.getByRole('progressbar', { name: "Progress of the AI's work" }).count(), 0);
    // Word-level redlines in place.
    const first = page.getByRole('group', { name: 'Proposed edit to section 2' });
    assert.equal(await first.locator('del.redline-del').first().textContent(), 'fox');
    assert.equal(await first.locator('ins.redline-ins').first().textContent(), 'cat');
    await assertAccessible(page, 'editor review');
    await screenshot(page, 'editor-review');

    // Keyboard: A accepts the current change (the first) and moves on; R rejects the next.
    await page.locator('body').press('a');
    await page.locator('body').press('r');
    await page.getByRole('group', { name: 'Proposed edit to section 4' }).getByRole('button', { name: 'Accept', exact: true }).click();
    assert.match((await bar.textContent()) || '', /2 accepted · 1 rejected · 0 to decide/);
    // The decisions survive a reload until the review is sent.
    await page.reload();
    await bar.waitFor();
    await page.waitForFunction(() => /2 accepted · 1 rejected · 0 to decide/.test(document.body.textContent || ''));
    await page.getByRole('group', { name: 'Proposed edit to section 3' }).getByText('Rejected', { exact: true }).waitFor();

    // Someone saves section 4 before the review is sent: that change is stale, and said so.
    const before = await call('GET', '/v1/documents/fables');
    const owl = String(before.body.html).replace('the way home.', 'the way home, said the owl.');
    assert.equal((await call('PUT', '/v1/documents/fables', { html: owl, base_version_id: before.body.version_id })).status, 200);
    await bar.getByRole('button', { name: /^Finish/ }).click();
    await bar.getByText(/One change no longer fits its section/).waitFor();
    const stale = page.getByRole('group', { name: 'Proposed edit to section 4' });
    await stale.getByText(/This change no longer fits/).waitFor();
    await stale.getByRole('button', { name: 'Reject', exact: true }).click();
    await bar.getByRole('button', { name: /^Finish/ }).click();
    await bar.waitFor({ state: 'detached' });
    const doc = page.locator('article.document');
    await page.waitForFunction(() => /said the owl/.test(document.querySelector('article.document')?.textContent || '') && !document.querySelector('.change'));
    await page.locator('.message.assistant').first().waitFor();
    const shown = (await doc.textContent()) || '';
    assert.match(shown, /quick brown cat/);
    assert.match(shown, /A fox and a crow/);
    assert.match(shown, /Every fox knows the way home, said the owl\./);
    const text = await storedText(call, 'fables');
    assert.match(text, /quick brown cat/);
    assert.match(text, /A fox and a crow/);
    assert.match(text, /said the owl/);

    // A question after it changes nothing: it offers no undo, and the version stays the
    // replace's.
    const answers = await page.locator('.message.assistant').count();
    await page.getByLabel('Message to the AI').fill('What does the crow do?');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForFunction((n) => document.querySelectorAll('.message.assistant').length > n, answers);
    assert.equal(await page.getByRole('button', { name: 'Undo this turn' }).count(), 1, 'no undo on the question');

    // Versions: the AI's, named by the message that asked for it; a preview of the first.
    await page.getByRole('tab', { name: 'Versions' }).click();
    const versions = page.locator('.version-list li');
    await versions.first().waitFor();
    assert.match((await versions.first().textContent()) || '', /The AI, asked “replace "fox" with "cat"”/);
    await versions.last().getByRole('button', { name: /^Preview/ }).click();
    const preview = page.getByRole('dialog');
    await preview.waitFor();
    assert.match((await preview.textContent()) || '', /quick brown fox/);
    await preview.getByRole('button', { name: 'Close' }).click();

    // Undo the turn from the chat.
    await page.getByRole('tab', { name: 'Chat' }).click();
    await page.getByRole('button', { name: 'Undo this turn' }).click();
    await page.getByRole('button', { name: 'Undo', exact: true }).click();
    await page.getByText('The turn was undone').waitFor();
    assert.match((await doc.textContent()) || '', /quick brown fox/);
    assert.match(await storedText(call, 'fables'), /quick brown fox/);

    // Export: DOCX and PDF download.
    await page.getByRole('tab', { name: 'Export' }).click();
    for (const [format, magic] of [['Word (DOCX)', 'PK'], ['PDF', '%PDF']]) {
      await page.getByLabel(format).check();
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download' }).click()]);
      const path = await download.path();
      const bytes = readFileSync(path);
      assert.equal(bytes.subarray(0, magic.length).toString('latin1'), magic, `${format} is a real file`);
      assert.match(download.suggestedFilename(), /^Fables\.(docx|pdf)$/);
    }
    // Mailed only to a verified address: refused in words until the mailed link is opened.
    await page.getByRole('button', { name: 'Email me a link' }).click();
    await page.getByRole('alert').filter({ hasText: 'Exports are mailed only to verified addresses' }).waitFor();
    const verify = new URL(await mailedLink(service, address, '/verify-email'));
    const token = new URLSearchParams(verify.hash.slice(1)).get('token');
    assert.equal((await service.call('POST', '/v1/auth/verify-email', { json: { token } })).status, 200);
    await page.getByRole('button', { name: 'Email me a link' }).click();
    await page.getByText(/a link to download it goes to/).waitFor();
    guard.check();
    await context.close();
  });

  test('a dropped event stream resumes from the last event and says so', async () => {
    const { page, context, guard } = await openPage(browser);
    const { call } = await account(service, context);
    await createDocument(call, 'drop', ['<h1>Drop</h1>', '<p>One apple.</p>', '<p>Two apples.</p>']);
    /** @type {(string | undefined)[]} */
    const resumedFrom = [];
    let cut = false;
    await page.route('**/v1/jobs/*/events', async (route) => {
      if (cut) {
        resumedFrom.push(route.request().headers()['last-event-id']);
        await route.continue();
        return;
      }
      cut = true;
      // The first connection delivers the first two events, then drops before `final`.
      // (Sent from outside the page, the request carries the browser's same-origin mark itself.)
      const res = await route.fetch({ headers: { ...route.request().headers(), 'sec-fetch-site': 'same-origin' } });
      const body = await res.text();
      assert.equal(res.status(), 200, body);
      const frames = body.split('\n\n').filter((f) => f.includes('event: intermediate')).slice(0, 2);
      await route.fulfill({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: `${frames.join('\n\n')}\n\n` });
    });
    await openEditor(page, service, 'drop', 'Drop');
    await page.getByLabel('Let me review each change before it is applied').uncheck();
    await page.getByLabel('Message to the AI').fill('replace "apple" with "pear"');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByText('The connection dropped and came back').waitFor();
    // Applied without review: the changed sections are marked in the document.
    await page.getByRole('group', { name: 'Changed by the AI: section 2' }).locator('ins.redline-ins', { hasText: 'pear' }).waitFor();
    assert.match(await storedText(call, 'drop'), /One pear/);
    assert.deepEqual(resumedFrom, ['2'], 'it reconnected once, from event 2');
    guard.check();
    await context.close();
  });

  test('attaches a file, shows its processing, and the AI quotes it by name', async () => {
    const { page, context, guard } = await openPage(browser);
    const { call } = await account(service, context);
    await createDocument(call, 'plans', ['<h1>Plans</h1>', '<p>We meet in spring.</p>']);
    await openEditor(page, service, 'plans', 'Plans');
    await page.getByRole('tab', { name: 'Attachments' }).click();
    await page.getByLabel('Attach a file').setInputFiles({
      name: 'harvest.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from('The harvest festival begins on the ninth of October in the old town square.\n'),
    });
    const item = page.locator('.attachment-list li', { hasText: 'harvest.txt' });
    await item.getByText(/^Ready/).waitFor();
    await assertAccessible(page, 'attachments');

    await page.getByRole('tab', { name: 'Chat' }).click();
    await page.getByLabel('Message to the AI').fill('When does the harvest festival begin?');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('.message.assistant', { hasText: 'harvest.txt' }).waitFor();

    await page.getByRole('tab', { name: 'Attachments' }).click();
    await item.getByRole('button', { name: 'Remove harvest.txt' }).click();
    await page.getByRole('button', { name: 'Remove', exact: true }).click();
    await page.getByText('No attachments yet.').waitFor();
    guard.check();
    await context.close();
  });

  test('a proposed deletion shows the whole section struck through; reject all keeps it', async () => {
    const { page, context, guard } = await openPage(browser);
    const { call } = await account(service, context);
    await createDocument(call, 'cut', ['<h1>Cut</h1>', '<p>Keep this paragraph.</p>', '<p>Maybe drop this one.</p>']);
    const [, , third] = await chunkIds(call, 'cut');
    await openEditor(page, service, 'cut', 'Cut');
    await page.getByLabel('Message to the AI').fill(`delete section ${third}`);
    await page.getByRole('button', { name: 'Send' }).click();
    const deletion = page.getByRole('group', { name: 'Proposed deletion of section 3' });
    await deletion.waitFor();
    assert.equal(((await deletion.locator('del.redline-del').allTextContents()).join(' ')).replace(/\s+/g, ' ').trim(), 'Maybe drop this one.');
    assert.equal(await deletion.locator('ins').count(), 0);
    // Reject all marks the change and waits for Finish, which then has the keyboard.
    await page.getByRole('button', { name: 'Reject all' }).click();
    await deletion.getByText('Rejected', { exact: true }).waitFor();
    await page.waitForFunction(() => document.activeElement?.id === 'review-finish');
    assert.match(await storedText(call, 'cut'), /Maybe drop this one\./, 'nothing is sent before Finish');
    await page.keyboard.press('Enter');
    await page.getByRole('region', { name: "Review of the AI's changes" }).waitFor({ state: 'detached' });
    // After Finish the keyboard is in the chat's message box, beside the AI's summary.
    await page.waitForFunction(() => document.activeElement?.id === 'chat-message');
    await page.locator('.message.assistant').first().waitFor();
    assert.match(await storedText(call, 'cut'), /Maybe drop this one\./, 'the section stays');
    guard.check();
    await context.close();
  });

  test('edit, then accept: the reviewer\'s own wording is applied, kept over a reload, and named in the versions', async () => {
    const { page, context, guard } = await openPage(browser);
    const { call } = await account(service, context);
    await createDocument(call, 'memo', ['<h1>Memo</h1>', '<p>The fox runs home.</p>']);
    await openEditor(page, service, 'memo', 'Memo');
    await page.getByLabel('Message to the AI').fill('replace "fox" with "cat"');
    await page.getByRole('button', { name: 'Send' }).click();
    const change = page.getByRole('group', { name: 'Proposed edit to section 2' });
    await change.waitFor();
    await change.getByRole('button', { name: 'Edit, then accept…' }).click();
    const box = change.getByRole('textbox', { name: 'Your version of the change' });
    await box.waitFor();
    assert.equal((await box.textContent())?.trim(), 'The cat runs home.', 'it starts from the AI\'s proposal');
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Your version of the change');
    await assertAccessible(page, 'correcting a proposed change');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('The cat walks home slowly.');
    await page.keyboard.press('Control+Enter');
    await change.getByText('Accepted with your corrections').waitFor();
    // The redline shows what accepting applies: the reviewer's words.
    assert.match((await change.locator('ins.redline-ins').allTextContents()).join(' '), /walks/);
    // The keyboard stays on the change.
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-change') !== null);
    await page.reload();
    await change.getByText('Accepted with your corrections').waitFor();
    assert.match(await storedText(call, 'memo'), /The fox runs home\./, 'nothing is applied before Finish');
    await page.locator('#review-finish').click();
    await page.getByRole('region', { name: "Review of the AI's changes" }).waitFor({ state: 'detached' });
    assert.match(await storedText(call, 'memo'), /The cat walks home slowly\./);
    await page.locator('.message.assistant', { hasText: '1 of 1 proposed change applied after review (1 corrected by the reviewer).' }).waitFor();
    await page.getByRole('tab', { name: 'Versions' }).click();
    const versions = page.locator('.version-list li');
    await versions.nth(1).waitFor();
    assert.match((await versions.first().textContent()) || '', /The AI, asked “replace "fox" with "cat"”, corrected in review/);
    guard.check();
    await context.close();
  });

  test('while changes await review, a Word export shows them as tracked changes', async () => {
    const { page, context, guard } = await openPage(browser);
    const { call } = await account(service, context);
    await createDocument(call, 'contract', ['<h1>Contract</h1>', '<p>The fox runs home.</p>']);
    await openEditor(page, service, 'contract', 'Contract');
    await page.getByLabel('Message to the AI').fill('replace "fox" with "cat"');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('group', { name: 'Proposed edit to section 2' }).waitFor();
    await page.getByRole('tab', { name: 'Export' }).click();
    const choice = page.getByLabel(/Show the 1 proposed change as tracked changes/);
    assert.equal(await choice.isChecked(), true, 'offered, and chosen, while a review is open');
    await assertAccessible(page, 'export with tracked changes');
    /** The `word/document.xml` of the DOCX the Download button gives. */
    const body = async () => {
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download' }).click()]);
      const read = 'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read("word/document.xml").decode())';
      return execFileSync('python3', ['-c', read, await download.path()]).toString();
    };
    const tracked = await body();
    assert.match(tracked, /<w:del [^>]*w:author="Redline AI"[^>]*><w:r><w:rPr><\/w:rPr><w:delText xml:space="preserve">fox<\/w:delText>/);
    assert.match(tracked, /<w:ins [^>]*w:author="Redline AI"[^>]*><w:r><w:rPr><\/w:rPr><w:t xml:space="preserve">cat<\/w:t>/);
    await choice.uncheck();
    await page.getByText('The file has the document as it is now, without the proposed changes.').waitFor();
    const plain = await body();
    assert.doesNotMatch(plain, /<w:ins |<w:del /);
    assert.match(plain, />The fox runs home\.</);
    // Other formats have no such choice; the review is still open.
    await page.getByLabel('PDF').check();
    assert.equal(await page.getByLabel(/as tracked changes/).count(), 0);
    await page.getByRole('region', { name: "Review of the AI's changes" }).waitFor();
    guard.check();
    await context.close();
  });

  test('a tracked export accepted in Word and uploaded back settles the review', async () => {
    const { page, context, guard } = await openPage(browser);
    const { call } = await account(service, context);
    await createDocument(call, 'memo-back', ['<h1>Memo</h1>', '<p>The fox runs home.</p>']);
    await openEditor(page, service, 'memo-back', 'Memo');
    await page.getByLabel('Message to the AI').fill('replace "fox" with "cat"');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('group', { name: 'Proposed edit to section 2' }).waitFor();
    await page.getByRole('tab', { name: 'Export' }).click();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download' }).click()]);
    // The reviewer accepts every revision, as Word's Accept All does, and saves.
    const reviewed = join(await mkdtemp(join(tmpdir(), 'redline-reviewed-')), 'memo-reviewed.docx');
    const acceptAll = [
      'import re, sys, zipfile',
      'src, dst = zipfile.ZipFile(sys.argv[1]), zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED)',
      'for item in src.infolist():',
      '    data = src.read(item.filename)',
      '    if item.filename == "word/document.xml":',
      '        text = re.sub(r"<w:del [^>]*>.*?</w:del>", "", data.decode(), flags=re.S)',
      '        data = re.sub(r"<w:ins [^>]*>|</w:ins>", "", text).encode()',
      '    dst.writestr(item, data)',
      'dst.close()',
    ].join('\n');
    execFileSync('python3', ['-c', acceptAll, await download.path(), reviewed]);
    await page.getByText('Upload the reviewed file').waitFor();
    await assertAccessible(page, 'export with a review to settle');
    await page.locator('#reviewed-file').setInputFiles(reviewed);
    await page.getByText(/memo-reviewed\.docx: the review is settled as decided in the file\. Changes: 1 accepted, 0 rejected\./).waitFor();
    await page.getByRole('region', { name: "Review of the AI's changes" }).waitFor({ state: 'detached' });
    assert.match(await storedText(call, 'memo-back'), /The cat runs home\./);
    await page.getByRole('tab', { name: 'Chat' }).click();
    await page.locator('.message.assistant', { hasText: 'Settled by the reviewed file memo-reviewed.docx: 1 accepted, 0 rejected.' }).waitFor();
    guard.check();
    await context.close();
  });

  test('a Word file with tracked changes opens with each change to review', async () => {
    const { page, context, guard } = await openPage(browser);
    const { call } = await account(service, context);
    await page.goto(`${service.base}/documents`);
    assert.equal(await page.getByLabel('Tracked changes in a Word file').inputValue(), 'review', 'review is the default');
    const docx = join(repo, 'tests', 'fixtures', 'corpus', 'docx', 'pandoc-track_changes_move.docx');
    await page.getByLabel('Choose a file').setInputFiles(docx);
    await page.waitForURL(/\/documents\/pandoc-track-changes-move-/);
    const sessionId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop() || '');
    const bar = page.getByRole('region', { name: "Review of the AI's changes" });
    await bar.waitFor();
    const order = (/** @type {string} */ text) => [text.indexOf('to be moved'), text.indexOf('some more text')];
    const [before, after] = order(await storedText(call, sessionId));
    assert.ok(before > after, 'nothing is applied before the review');
    await bar.getByRole('button', { name: 'Accept all' }).click();
    await bar.getByRole('button', { name: /^Finish: apply/ }).click();
    await bar.waitFor({ state: 'detached' });
    const [moved, more] = order(await storedText(call, sessionId));
    assert.ok(moved < more, 'accepted: the paragraph is where the reviewer moved it');
    guard.check();
    await context.close();
  });

  test('an earlier version is previewed and restored as a new version', async () => {
    const { page, context, guard } = await openPage(browser);
    const { call } = await account(service, context);
    await createDocument(call, 'drafts', ['<h1>Drafts</h1>', '<p>The first wording.</p>']);
    await createDocument(call, 'drafts', ['<h1>Drafts</h1>', '<p>A later wording.</p>']);
    await openEditor(page, service, 'drafts', 'drafts');
    await page.getByRole('tab', { name: 'Versions' }).click();
    const versions = page.locator('.version-list li');
    await versions.nth(1).waitFor();
    await versions.last().getByRole('button', { name: /^Preview/ }).click();
    const preview = page.getByRole('dialog');
    await preview.getByText('The first wording.').waitFor();
    // Compared with the current version: a word-level redline.
    await preview.getByRole('button', { name: 'Compare with the current version' }).click();
    await preview.getByRole('status').filter({ hasText: 'From this version to the current one: 2 words in, 2 words out' }).waitFor();
    assert.equal((await preview.locator('del.redline-del').allTextContents()).join(' ').trim(), 'The first');
    assert.equal((await preview.locator('ins.redline-ins').allTextContents()).join(' ').trim(), 'A later');
    await assertAccessible(page, 'version comparison');
    await screenshot(page, 'versions-compare');
    await preview.getByRole('button', { name: 'Compare with the current version' }).click();
    await preview.getByText('The first wording.').waitFor();
    await assertAccessible(page, 'version preview');
    await preview.getByRole('button', { name: 'Restore this version' }).click();
    await page.getByRole('status').filter({ hasText: 'is the document again, as a new version' }).waitFor();
    await page.locator('article.document', { hasText: 'The first wording.' }).first().waitFor();
    assert.match(await storedText(call, 'drafts'), /The first wording\./);
    await page.waitForFunction(() => document.querySelectorAll('.version-list li').length === 3);
    assert.match((await versions.first().textContent()) || '', /An earlier version, restored/);
    assert.equal(await versions.first().locator('.badge', { hasText: 'Current' }).count(), 1);
    await screenshot(page, 'versions-restored');
    // The restored version keeps its sections: compared section by section, nothing changed.
    await versions.last().getByRole('button', { name: /^Preview/ }).click();
    await preview.getByRole('button', { name: 'Compare with the current version' }).click();
    await preview.getByRole('status').filter({ hasText: 'From this version to the current one: no change in words.' }).waitFor();
    assert.equal(await preview.locator('del.redline-del, ins.redline-ins').count(), 0);
    guard.check();
    await context.close();
  });

  test('the title is renamed in the editor and the list; a pasted heading does not rename it', async () => {
    const { page, context, guard } = await openPage(browser, { width: 1366, height: 900 });
    const { call } = await account(service, context);
    await createDocument(call, 'named', ['<h1>Quarterly plan</h1>', '<p>The plan.</p>']);
    await openEditor(page, service, 'named', 'Quarterly plan');
    // The numbers review cards name sections by are shown, and the side tabs fit one row.
    assert.deepEqual(await page.locator('article.document .section-number').allTextContents(), ['1', '2']);
    const tops = await page.locator('.editor-side [role=tab]').evaluateAll((tabs) => tabs.map((t) => t.getBoundingClientRect().top));
    assert.equal(new Set(tops).size, 1, `the side tabs wrap at 1366 px: ${tops}`);

    // A heading pasted at the top of the document is text, not the title.
    const head = page.locator('.editor-head');
    await page.getByRole('button', { name: 'Edit section 1' }).click();
    const section = page.getByRole('textbox', { name: 'Section 1' });
    await section.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.type('Another heading');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved.', { exact: true }).waitFor();
    await head.getByRole('heading', { name: 'Quarterly plan', level: 1 }).waitFor();

    // Renamed in place: Escape puts the name back, Enter saves, the keyboard returns to Rename.
    await head.getByRole('button', { name: 'Rename Quarterly plan' }).click();
    const field = page.getByLabel('New name of Quarterly plan');
    await field.fill('Abandoned');
    await field.press('Escape');
    await head.getByRole('heading', { name: 'Quarterly plan', level: 1 }).waitFor();
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Rename Quarterly plan');
    await page.keyboard.press('Enter');
    await field.fill('   ');
    await field.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'A document needs a name' }).waitFor();
    await field.fill('Plan for Q3: final');
    await assertAccessible(page, 'renaming a document');
    await field.press('Enter');
    await head.getByRole('heading', { name: 'Plan for Q3: final', level: 1 }).waitFor();
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Rename Plan for Q3: final');
    assert.equal((await call('GET', '/v1/documents/named')).body.title, 'Plan for Q3: final');

    // Exports are named after it.
    await page.getByRole('tab', { name: 'Export' }).click();
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: /^Download/ }).click();
    assert.match((await download).suggestedFilename(), /^Plan for Q3_ final\.docx$/);

    // The list shows it and renames too.
    await page.getByRole('link', { name: '← Documents' }).click();
    const row = page.getByRole('row', { name: /Plan for Q3: final/ });
    await row.getByRole('button', { name: 'Rename Plan for Q3: final' }).click();
    await row.getByLabel('New name of Plan for Q3: final').fill('Plan, renamed from the list');
    await row.getByRole('button', { name: 'Save name' }).click();
    await page.getByRole('link', { name: 'Plan, renamed from the list' }).waitFor();
    assert.equal((await call('GET', '/v1/documents/named')).body.title, 'Plan, renamed from the list');
    guard.check();
    await context.close();
  });

  test('an editor load, a review and a comparison break no policy, styled content included', async () => {
    const { page, context, guard } = await openPage(browser, { width: 1366, height: 900 });
    const watch = await watchOrigins(context, service.base);
    const { call } = await account(service, context);
    await createDocument(call, 'styled', [
      '<h1 style="color: rgb(20, 60, 160)">Styled</h1>',
      '<p style="text-align: center">A <span style="background-color: rgb(255, 240, 0)">marked</span> fox.</p>',
      '<table><tbody><tr><td style="border: 1px solid black; padding: 4px">fox cell</td></tr></tbody></table>',
    ]);
    await createDocument(call, 'styled', [
      '<h1 style="color: rgb(20, 60, 160)">Styled</h1>',
      '<p style="text-align: center">A <span style="background-color: rgb(255, 240, 0)">marked</span> fox, changed.</p>',
      '<table><tbody><tr><td style="border: 1px solid black; padding: 4px">fox cell</td></tr></tbody></table>',
    ]);
    await openEditor(page, service, 'styled', 'Styled');
    const align = await page.locator('article.document p', { hasText: 'marked' }).evaluate((el) => getComputedStyle(el).textAlign);
    assert.equal(align, 'center', 'the document\'s own styles apply');
    await page.getByLabel('Message to the AI').fill('replace "fox" with "cat"');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('region', { name: "Review of the AI's changes" }).waitFor();
    await page.getByRole('tab', { name: 'Versions' }).click();
    await page.locator('.version-list li').last().getByRole('button', { name: /^Preview/ }).click();
    const preview = page.getByRole('dialog');
    await preview.getByRole('button', { name: 'Compare with the current version' }).click();
    await preview.locator('ins.redline-ins').first().waitFor();
    await preview.getByRole('button', { name: 'Close' }).click();
    watch.check();
    guard.check();
    await context.close();
  });

  test('a turn applied without review marks what it changed, until the marks are hidden', async () => {
    const { page, context, guard } = await openPage(browser, { width: 1366, height: 900 });
    const { call } = await account(service, context);
    await createDocument(call, 'direct', ['<h1>Direct</h1>', '<p>The old colour.</p>', '<p>Nothing here.</p>']);
    await openEditor(page, service, 'direct', 'Direct');
    await page.getByLabel('Let me review each change before it is applied').uncheck();
    await page.getByLabel('Message to the AI').fill('replace "old" with "new"');
    await page.getByRole('button', { name: 'Send' }).click();
    const marked = page.getByRole('group', { name: 'Changed by the AI: section 2' });
    await marked.waitFor();
    assert.equal((await marked.locator('del.redline-del').allTextContents()).join(' '), 'old');
    assert.equal((await marked.locator('ins.redline-ins').allTextContents()).join(' '), 'new');
    assert.equal(await page.locator('.change.applied').count(), 1, 'only the section it changed');
    await page.getByRole('status').filter({ hasText: 'The AI changed 1 section without review' }).waitFor();
    assert.match(await storedText(call, 'direct'), /The new colour\./, 'applied at once');
    await assertAccessible(page, 'marks of a turn applied without review');
    await page.getByRole('button', { name: 'Hide the marks' }).click();
    await marked.waitFor({ state: 'detached' });
    await page.locator('article.document .section', { hasText: 'The new colour.' }).waitFor();
    guard.check();
    await context.close();
  });

  test('a pasted picture becomes the document\'s own; one from another site is left out with a sentence', async () => {
    const { page, context, guard } = await openPage(browser, { width: 1366, height: 900 });
    const { call } = await account(service, context);
    await createDocument(call, 'pasted', ['<h1>Pasted</h1>', '<p>Before the picture.</p>']);
    await openEditor(page, service, 'pasted', 'Pasted');
    await page.getByRole('button', { name: 'Edit section 2' }).click();
    const section = page.getByRole('textbox', { name: 'Section 2' });
    await section.click();
    await page.keyboard.press('End');
    // A screenshot on the clipboard: a PNG file.
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    await section.evaluate((el, b64) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const data = new DataTransfer();
      data.items.add(new File([bytes], 'screenshot.png', { type: 'image/png' }));
      el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    }, png);
    const img = section.locator('img');
    await img.waitFor();
    assert.match((await img.getAttribute('src')) || '', /\/v1\/documents\/images\/img_[0-9a-f]{32}$/);
    assert.ok(await img.evaluate((el) => /** @type {HTMLImageElement} */ (el).complete && /** @type {HTMLImageElement} */ (el).naturalWidth === 1), 'it shows');
    // HTML from another site: its picture cannot be read here, so it is left out, and said.
    await section.evaluate((el) => {
      const data = new DataTransfer();
      // Rich HTML as a browser copies it, inline styles and all: pasted without a policy breach.
      data.setData('text/html', '<p style="color: rgb(10, 10, 10); font-family: Arial">Copied <b style="font-weight: 700">words</b> <img src="https://elsewhere.example/chart.png" alt="chart"></p>');
      data.setData('text/plain', 'Copied words');
      el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    });
    await page.getByRole('status').filter({ hasText: 'A picture from another site was left out' }).waitFor();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved.', { exact: true }).waitFor();
    const stored = String((await call('GET', '/v1/documents/pasted')).body.html);
    assert.match(stored, /<img [^>]*src="[^"]*\/v1\/documents\/images\/img_[0-9a-f]{32}"/);
    assert.match(stored, /Copied <b>words<\/b>/);
    assert.doesNotMatch(stored, /remote image|elsewhere\.example/);
    guard.check();
    await context.close();
  });

  test('on a phone the document and the chat are tabs of one screen, and the review bar is compact', async () => {
    const { page, context, guard } = await openPage(browser, { width: 390, height: 844 });
    const { call } = await account(service, context);
    const sections = ['<h1>Phone</h1>'];
    for (let i = 2; i <= 31; i++) sections.push(`<p>Paragraph ${i} about the fox, long enough to wrap on a phone's narrow screen.</p>`);
    await createDocument(call, 'phone', sections);
    await openEditor(page, service, 'phone', 'Phone');
    const tabs = page.getByRole('tablist', { name: 'Show' });
    await tabs.waitFor();
    assert.equal(await tabs.getByRole('tab', { name: 'Document' }).getAttribute('aria-selected'), 'true');
    assert.equal(await page.getByLabel('Message to the AI').isVisible(), false, 'the chat is a tab away, not below the document');

    // The chat is one tap away, its message box on the first screen.
    await tabs.getByRole('tab', { name: 'Chat' }).click();
    const box = await page.getByLabel('Message to the AI').boundingBox();
    assert.ok(box && box.y + box.height <= 844, `the message box is on screen: ${JSON.stringify(box)}`);
    await page.getByLabel('Message to the AI').fill('replace "fox" with "cat"');
    await page.getByRole('button', { name: 'Send' }).click();

    // The review happens in the document, which its tab opens; the bar is compact.
    const bar = page.getByRole('region', { name: "Review of the AI's changes" });
    await bar.waitFor();
    await tabs.getByRole('tab', { name: /^Document \(30 to review\)/ }).waitFor();
    const height = (await bar.boundingBox())?.height || 0;
    assert.ok(height > 0 && height <= 130, `the review bar takes ${height} px of 844`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the editor scrolls sideways by ${overflow} px`);
    await assertAccessible(page, 'editor on a phone, reviewing');
    await screenshot(page, 'phone-editor', { screen: true });
    await bar.getByRole('button', { name: 'Accept all' }).click();
    await page.waitForFunction(() => document.activeElement?.id === 'review-finish');
    await page.keyboard.press('Enter');
    await bar.waitFor({ state: 'detached' });
    // Finish leads to the chat, where the AI says what was applied.
    await page.waitForFunction(() => document.activeElement?.id === 'chat-message');
    assert.equal(await tabs.getByRole('tab', { name: 'Chat' }).getAttribute('aria-selected'), 'true');
    await page.locator('.message.assistant', { hasText: '30 of 30 proposed changes applied after review.' }).waitFor();
    assert.match(await storedText(call, 'phone'), /Paragraph 31 about the cat/);
    guard.check();
    await context.close();
  });

  test('a long document opens; links ask before they open', async () => {
    const { page, context, guard } = await openPage(browser);
    const { call } = await account(service, context);
    const sections = ['<h1>Long</h1>', '<p>See <a href="https://example.com/terms">the terms</a>.</p>'];
    for (let i = 3; i <= 1000; i++) sections.push(`<p>Paragraph ${i} of the long document, with enough words to wrap on a narrow screen.</p>`);
    await createDocument(call, 'long', sections);
    await openEditor(page, service, 'long', 'Long');
    await page.getByText('Paragraph 1000 of the long document').waitFor({ state: 'attached' });
    assert.equal(await page.locator('article.document .section').count(), 1000);

    // A save far down keeps the screen and the keyboard at the section saved.
    await page.getByRole('button', { name: 'Edit section 600' }).click();
    await page.getByRole('textbox', { name: 'Section 600' }).press('Control+End');
    await page.keyboard.type(' Edited.');
    await page.keyboard.press('Control+s');
    await page.getByText('Saved.', { exact: true }).waitFor();
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Edit section 600');
    const shown = await page.getByText('Paragraph 600 of the long document').boundingBox();
    assert.ok(shown && shown.y >= 0 && shown.y < 900, `section 600 is still on screen after the save: ${JSON.stringify(shown)}`);
    const saved = await storedText(call, 'long');
    assert.ok(saved.includes('Paragraph 600 of the long document, with enough words to wrap on a narrow screen. Edited.'), 'section 600 saved with the edit');
    await page.getByText('Paragraph 1000 of the long document').scrollIntoViewIfNeeded();

    /** @type {string[]} */
    const opened = [];
    context.on('page', (p) => opened.push(p.url()));
    await page.getByRole('link', { name: 'the terms' }).click();
    const dialog = page.getByRole('dialog', { name: 'Open a link to example.com?' });
    await dialog.waitFor();
    assert.match((await dialog.textContent()) || '', /https:\/\/example\.com\/terms/);
    await assertAccessible(page, 'link dialog');
    await dialog.getByRole('button', { name: 'Stay here' }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.deepEqual(opened, [], 'nothing opened without a yes');
    guard.check();
    await context.close();
  });
});

describe('the editor with the OpenAI-wire fake', () => {
  /** @type {FakeLlm} */
  let fake;
  /** @type {Service} */
  let service;
  before(async () => {
    fake = await FakeLlm.start();
    service = await Service.start(fake.env());
  });
  after(async () => {
    await service?.stop();
    await fake?.stop();
  });

  test('upload, ask, review, reject with a note, see the second proposal, accept, revert, export', async () => {
    const { page, context, guard } = await openPage(browser, { width: 1400, height: 900 });
    const { call } = await account(service, context);
    await page.goto(`${service.base}/documents`);
    const docx = join(repo, 'tests', 'fixtures', 'corpus', 'docx', 'tika-testWORD_various.docx');
    await page.getByLabel('Choose a file').setInputFiles(docx);
    await page.waitForURL(/\/documents\/tika-testword-various-/);
    const sessionId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop() || '');
    await page.locator('article.document .section').first().waitFor();
    const ids = await chunkIds(call, sessionId);
    assert.ok(ids.length >= 4, `the upload has sections: ${ids.length}`);
    const [, second, third] = ids;

    await fake.script({
      steps: [
        { tool_calls: [
          { name: 'edit_section', arguments: { chunk_id: second, new_html: '<p>Accepted words from the AI.</p>', explanation: 'Clearer.' } },
          { name: 'edit_section', arguments: { chunk_id: third, new_html: '<p>Rejected words from the AI.</p>', explanation: 'Shorter.' } },
          { name: 'create_section', arguments: { after_chunk_id: third, new_html: '<p>A section the reviewer wants shorter.</p>', explanation: 'Adds a summary.' } },
        ] },
        'I propose three changes.',
        { match: 'Make it one line', tool_calls: [
          { name: 'create_section', arguments: { after_chunk_id: third, new_html: '<p>Short summary.</p>', explanation: 'One line, as asked.' } },
        ] },
        'Here is a shorter summary.',
      ],
    });
    await page.getByLabel('Message to the AI').fill('Tidy the opening and add a summary.');
    await page.getByRole('button', { name: 'Send' }).click();
    const bar = page.getByRole('region', { name: "Review of the AI's changes" });
    await bar.waitFor();
    assert.match((await bar.textContent()) || '', /The AI proposes 3 changes\./);
    assert.match((await page.locator('.steps').textContent()) || '', /Editing section 2/);

    await page.getByRole('group', { name: 'Proposed edit to section 2' }).getByRole('button', { name: 'Accept', exact: true }).click();
    await page.getByRole('group', { name: 'Proposed edit to section 3' }).getByRole('button', { name: 'Reject', exact: true }).click();
    const created = page.getByRole('group', { name: 'Proposed new section after section 3' });
    assert.equal(await created.locator('ins.redline-ins').count() > 0 || (await created.locator('.redline').textContent())?.includes('A section the reviewer'), true);
    await created.getByRole('button', { name: 'Reject with a note…' }).click();
    await created.getByLabel('What should the AI do instead?').fill('Make it one line.');
    // Ctrl+Enter sends the note, and the keyboard stays on the change.
    await created.getByLabel('What should the AI do instead?').press('Control+Enter');
    await created.getByText('Rejected with a note').waitFor();
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Proposed new section after section 3');
    await bar.getByRole('button', { name: 'Send my decisions and notes' }).click();

    // The AI tries again with the note, and proposes again.
    await page.getByRole('group', { name: 'Proposed new section after section 3' }).filter({ hasText: 'Short summary.' }).waitFor();
    // The accepted change is in the document while the AI's second proposal waits.
    await page.locator('article.document .section', { hasText: 'Accepted words from the AI.' }).waitFor();
    await bar.getByRole('button', { name: 'Accept all' }).click();
    await bar.getByRole('button', { name: /^Finish: apply 1, reject 0/ }).click();
    await bar.waitFor({ state: 'detached' });
    await page.getByText('Here is a shorter summary.').waitFor();
    // The chat keeps the round the note sent back: the AI's first answer, the note, the retry.
    // Read once the chat has settled (it is drawn again from the history after Finish).
    await page.waitForFunction(() => document.querySelectorAll('.messages > li.message').length === 4, null, { timeout: 10_000 })
      .catch(() => {});
    const said = await page.locator('.messages > li.message').evaluateAll((items) =>
      items.map((li) => `${li.querySelector('.who')?.textContent}: ${li.querySelector('p')?.textContent}`));
    assert.equal(said.length, 4, said.join('\n'));
    assert.match(said[1], /^AI: [\s\S]*1 of 3 proposed changes applied after review\.$/);
    assert.match(said[2], /^Your review: My notes on the changes I rejected:\nOn the new section after section 3: Make it one line\.$/);
    assert.match(said[3], /^AI: Here is a shorter summary\.[\s\S]*1 of 1 proposed change applied after review\.$/);
    const text = await storedText(call, sessionId);
    assert.match(text, /Accepted words from the AI\./);
    assert.match(text, /Short summary\./);
    assert.doesNotMatch(text, /Rejected words|reviewer wants shorter/);
    const feedback = (await fake.requests()).some((r) => JSON.stringify(r.body).includes('Make it one line.'));
    assert.ok(feedback, 'the note reached the model');

    await page.getByRole('tab', { name: 'Versions' }).click();
    const versions = page.locator('.version-list li');
    await versions.first().waitFor();
    assert.match((await versions.first().textContent()) || '', /The AI, asked “Tidy the opening/);

    await page.getByRole('tab', { name: 'Chat' }).click();
    await page.getByRole('button', { name: 'Undo this turn' }).click();
    await page.getByRole('button', { name: 'Undo', exact: true }).click();
    await page.getByText('The turn was undone').waitFor();
    assert.doesNotMatch(await storedText(call, sessionId), /Accepted words|Short summary/);

    await page.getByRole('tab', { name: 'Export' }).click();
    for (const format of ['Word (DOCX)', 'PDF']) {
      await page.getByLabel(format).check();
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download' }).click()]);
      assert.ok(readFileSync(await download.path()).length > 500, `${format} downloaded`);
    }
    guard.check();
    await context.close();
  });

  test('cancels a turn that takes long, and says so', async () => {
    const { page, context, guard } = await openPage(browser);
    const { call } = await account(service, context);
    await createDocument(call, 'slow', ['<h1>Slow</h1>', '<p>Nothing yet.</p>']);
    await fake.script({ steps: [{ delay_s: 20, text: 'Too late.' }] });
    await openEditor(page, service, 'slow', 'Slow');
    await page.getByLabel('Message to the AI').fill('Write a long essay.');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('progressbar', { name: "Progress of the AI's work" }).waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('status').filter({ hasText: /cancel/i }).first().waitFor();
    assert.equal(await page.getByRole('button', { name: 'Cancel' }).count(), 0, 'the turn is over');
    assert.match(await storedText(call, 'slow'), /Nothing yet\./, 'nothing changed');
    await fake.script({ steps: [] });
    guard.check();
    await context.close();
  });
});
