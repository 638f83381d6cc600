// @ts-check
// The web app as a person uses it, in Debian's Chromium against the real binary.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { Service, assertAccessible, email, launch, mailedLink, openPage, repo, screenshot, watchOrigins } from './support.mjs';

/** @type {Service} */
let service;
/** @type {import('playwright-core').Browser} */
let browser;

before(async () => {
  service = await Service.start();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await service?.stop();
});

const PASSWORD = 'correct horse battery';

/**
 * Signs up through the pages and lands on the documents.
 * @param {import('playwright-core').Page} page
 * @param {string} address
 */
async function signUp(page, address) {
  await page.goto(`${service.base}/signup`);
  await page.getByLabel('E-mail').fill(address);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { name: 'Documents', level: 1 }).waitFor();
}

describe('accounts', () => {
  test('sign-up shows the password rule at the field, then signs in with a cookie only', async () => {
    const { page, context, guard } = await openPage(browser);
    await page.goto(`${service.base}/`);
    await page.getByRole('heading', { name: 'Sign in to Redline' }).waitFor();
    // A first visit says what Redline does.
    await page.getByText('Redline keeps your documents and lets an AI edit them in chat.').waitFor();
    await assertAccessible(page, 'sign in');
    await screenshot(page, 'signin');

    await page.getByRole('link', { name: 'Create an account' }).click();
    const address = email('rules');
    await page.getByLabel('E-mail').fill(address);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    const passwordError = page.locator('.field-error');
    await passwordError.waitFor();
    assert.equal(await passwordError.textContent(), 'Use at least 8 characters.');
    assert.equal(await page.getByLabel('Password').getAttribute('aria-invalid'), 'true');
    await assertAccessible(page, 'sign up with an error');
    await screenshot(page, 'signup-error');

    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Documents', level: 1 }).waitFor();

    // The session is an HttpOnly cookie: no script can read it, and nothing is stored.
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'redline_session');
    assert.ok(session, 'the session cookie is set');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Lax');
    const stored = await page.evaluate(() => ({ local: localStorage.length, cookie: document.cookie }));
    assert.equal(stored.local, 0, 'nothing in localStorage');
    assert.ok(!stored.cookie.includes('redline_session'), 'the cookie is not visible to scripts');

    // Signing up again with the same address says so at the e-mail field.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Redline' }).waitFor();
    await page.goto(`${service.base}/signup`);
    await page.getByLabel('E-mail').fill(address);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.locator('.field-error', { hasText: 'already exists' }).waitFor();

    // A wrong password is a sentence, not JSON.
    await page.goto(`${service.base}/signin`);
    await page.getByLabel('E-mail').fill(address);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.equal(await alert.textContent(), 'Invalid email or password.');
    guard.check();
    await context.close();
  });

  test('sign-out ends the session: the pages ask to sign in again', async () => {
    const { page, context, guard } = await openPage(browser);
    await signUp(page, email('out'));
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Redline' }).waitFor();
    assert.equal((await context.cookies()).filter((c) => c.name === 'redline_session' && c.value).length, 0);
    await page.goto(`${service.base}/settings/keys`);
    await page.getByRole('heading', { name: 'Sign in to Redline' }).waitFor();
    guard.check();
    await context.close();
  });
});

describe('account security', () => {
  test('a common password is refused at the field, in words', async () => {
    const { page, context, guard } = await openPage(browser);
    await page.goto(`${service.base}/signup`);
    await page.getByLabel('E-mail').fill(email('common'));
    await page.getByLabel('Password').fill('password1');
    await page.getByRole('button', { name: 'Create account' }).click();
    const error = page.locator('.field-error');
    await error.waitFor();
    assert.equal(await error.textContent(), 'This password is on a list of common or leaked passwords: choose another.');
    guard.check();
    await context.close();
  });

  test('the security page changes the password, lists sessions and signs one out', async () => {
    const { page, context, guard } = await openPage(browser);
    const address = email('security');
    await signUp(page, address);
    // A second browser signed in to the same account.
    const other = await service.call('POST', '/v1/auth/login', { json: { email: address, password: PASSWORD }, headers: { 'User-Agent': 'Other laptop' } });
    assert.equal(other.status, 200);
    await page.getByRole('link', { name: 'Security' }).click();
    await page.getByRole('heading', { name: 'Security', level: 1 }).waitFor();
    const row = page.getByRole('row', { name: /Other laptop/ });
    await row.waitFor();
    await page.getByRole('row', { name: /\(this one\)/ }).waitFor();
    await assertAccessible(page, 'security');
    await screenshot(page, 'security');

    await page.getByLabel('Current password').fill('not it at all');
    await page.getByLabel('New password').fill('a fresh long passphrase');
    await page.getByRole('button', { name: 'Change the password' }).click();
    await page.getByRole('alert').filter({ hasText: 'The current password is wrong.' }).waitFor();

    await page.getByLabel('Current password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Change the password' }).click();
    await page.getByRole('status').filter({ hasText: 'Password changed. One other session was signed out.' }).waitFor();
    const me = await service.call('GET', '/v1/users/me', { headers: { Authorization: `Bearer ${other.body.token}` } });
    assert.equal(me.status, 401, 'the other session ended');

    await page.reload();
    await page.getByRole('heading', { name: 'Security', level: 1 }).waitFor();
    assert.equal(await page.getByRole('row', { name: /Other laptop/ }).count(), 0);
    await page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await page.getByRole('button', { name: 'Sign out everywhere' }).last().click();
    await page.getByRole('heading', { name: 'Sign in to Redline' }).waitFor();
    guard.check();
    await context.close();
  });

  test('a forgotten password is reset from the mailed link', async () => {
    const { page, context, guard } = await openPage(browser);
    const address = email('reset');
    await signUp(page, address);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    await assertAccessible(page, 'forgot password');
    await page.getByLabel('E-mail').fill(address);
    await page.getByRole('button', { name: 'Mail me a link' }).click();
    await page.getByRole('status').filter({ hasText: 'a link to reset its password is on its way' }).waitFor();

    const link = await mailedLink(service, address);
    assert.ok(link.startsWith(`${service.base}/reset-password#token=pr_`), link);
    await page.goto(link);
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    await assertAccessible(page, 'reset password');
    await page.getByLabel('New password').fill('12345678');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.locator('.field-error', { hasText: 'common or leaked' }).waitFor();
    await page.getByLabel('New password').fill('a reset long passphrase');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.getByRole('status').filter({ hasText: 'Your password is changed' }).waitFor();
    assert.ok(!page.url().includes('token'), 'the token leaves the address bar');
    const login = await service.call('POST', '/v1/auth/login', { json: { email: address, password: 'a reset long passphrase' } });
    assert.equal(login.status, 200);
    guard.check();
    await context.close();
  });
});

describe('e-mail verification', () => {
  test('a new account is asked to verify its address, and the mailed link does it', async () => {
    const { page, context, guard } = await openPage(browser);
    const address = email('verify');
    await signUp(page, address);
    const banner = page.getByRole('region', { name: 'E-mail verification' });
    await banner.getByText(`Your e-mail address ${address} is not verified yet`).waitFor();
    await assertAccessible(page, 'documents with the verification banner');
    await banner.getByRole('button', { name: 'Mail me a new link' }).click();
    await banner.getByRole('status').filter({ hasText: `A verification link is on its way to ${address}.` }).waitFor();

    const link = await mailedLink(service, address, '/verify-email');
    assert.ok(link.startsWith(`${service.base}/verify-email#token=ev_`), link);
    await page.goto(link);
    await page.getByRole('status').filter({ hasText: `${address} is verified.` }).waitFor();
    await assertAccessible(page, 'verify e-mail');
    assert.ok(!page.url().includes('token'), 'the token leaves the address bar');
    await page.getByRole('link', { name: 'Go to your documents' }).click();
    await page.getByRole('heading', { name: 'Documents', level: 1 }).waitFor();
    assert.equal(await banner.count(), 0, 'no banner once verified');

    // A used link says so in a sentence.
    await page.goto(link);
    await page.getByRole('alert').filter({ hasText: 'This verification link is unknown, already used or expired.' }).waitFor();
    guard.check();
    await context.close();
  });
});


describe('organization links', () => {
  test('a document link names its organization, so it opens in a new tab and for a colleague', async () => {
    const { page, context, guard } = await openPage(browser);
    const address = email('orglink');
    await signUp(page, address);
    const login = await service.call('POST', '/v1/auth/login', { json: { email: address, password: PASSWORD } });
    const auth = { Authorization: `Bearer ${login.body.token}` };
    const org = await service.call('POST', '/v1/users/me/organizations', { json: { name: 'Acme Legal' }, headers: auth });
    const orgId = org.body.org_id;
    const body = { html: '<h1>The brief</h1><p>Text.</p>', title: 'The brief' };
    const put = await service.call('PUT', '/v1/documents/brief', { json: body, headers: { ...auth, 'Redline-Organization': orgId } });
    assert.equal(put.status, 200, JSON.stringify(put.body));

    await page.reload();
    await page.getByLabel('Acting for').selectOption(orgId);
    await page.getByRole('heading', { name: 'Documents of Acme Legal' }).waitFor();
    const href = await page.getByRole('link', { name: 'The brief' }).getAttribute('href');
    assert.equal(href, `/documents/brief?org=${orgId}`);
    // A new tab has no "Acting for" of its own: the address alone opens the document.
    const tab = await context.newPage();
    await tab.goto(`${service.base}${href}`);
    await tab.locator('.editor-head').getByRole('heading', { name: 'The brief', level: 1 }).waitFor();
    await tab.close();

    // Someone who is not a member is told so in a sentence.
    const stranger = await openPage(browser);
    await signUp(stranger.page, email('stranger'));
    await stranger.page.goto(`${service.base}${href}`);
    await stranger.page.getByRole('alert').filter({ hasText: 'This link belongs to an organization you are not a member of' }).waitFor();
    await stranger.context.close();
    guard.check();
    await context.close();
  });
});

describe('API keys', () => {
  test('a key is shown once, listed by its preview, and revoked after a confirmation', async () => {
    const { page, context, guard } = await openPage(browser);
    await signUp(page, email('keys'));
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    await page.getByLabel('Name (what it is for)').fill('CI robot');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = page.getByLabel('The new API key');
    await secret.waitFor();
    const key = (await secret.textContent()) || '';
    assert.match(key, /^sk_[0-9a-f]{32}$/);
    await page.getByText('this is the only time Redline shows it').waitFor();
    await assertAccessible(page, 'keys with a new key');
    await screenshot(page, 'keys-created');

    await page.getByRole('button', { name: 'Copy the key' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key);

    // The key works against the API.
    assert.equal((await service.call('GET', '/v1/sessions', { headers: { Authorization: `Bearer ${key}` } })).status, 200);

    // Once dismissed, or after a reload, the key is never shown again: only its preview.
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.reload();
    const row = page.getByRole('row', { name: /CI robot/ });
    await row.waitFor();
    assert.ok(!(await page.content()).includes(key), 'the full key is gone from the page');
    assert.ok(((await row.textContent()) || '').includes(key.slice(0, 7)), 'the preview starts like the key');

    await row.getByRole('button', { name: 'Revoke CI robot' }).click();
    await page.getByText('this cannot be undone').waitFor();
    await page.getByRole('button', { name: 'Revoke for ever' }).click();
    await row.getByText(/^Revoked/).waitFor();
    assert.equal((await service.call('GET', '/v1/sessions', { headers: { Authorization: `Bearer ${key}` } })).status, 401);
    guard.check();
    await context.close();
  });

  test('a read-only key that expires is made, listed with what it may do, and refused an edit', async () => {
    const { page, context, guard } = await openPage(browser);
    await signUp(page, email('scopes'));
    await page.goto(`${service.base}/settings/keys`);
    await page.getByLabel('Name (what it is for)').fill('Dashboard');
    await page.getByLabel('What it may do').selectOption('read');
    await page.getByLabel('Expires').selectOption('30');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = page.getByLabel('The new API key');
    await secret.waitFor();
    const key = (await secret.textContent()) || '';
    const auth = { Authorization: `Bearer ${key}` };
    assert.equal((await service.call('GET', '/v1/sessions', { headers: auth })).status, 200);
    const edit = await service.call('PUT', '/v1/documents/s1', { json: { html: '<p>x</p>' }, headers: auth });
    assert.equal(edit.status, 403);
    assert.match(edit.body.detail, /lacks the 'edit' scope/);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    const row = page.getByRole('row', { name: /Dashboard/ });
    await row.waitFor();
    await row.getByText('Read only').waitFor();
    await row.getByText(/^Active until/).waitFor();
    await assertAccessible(page, 'keys with a read-only key');
    guard.check();
    await context.close();
  });

  test('the plan limit on keys is explained', async () => {
    const { page, context, guard } = await openPage(browser);
    await signUp(page, email('limit'));
    await page.goto(`${service.base}/settings/keys`);
    for (let i = 1; i <= 6; i++) {
      await page.getByLabel('Name (what it is for)').fill(`key ${i}`);
      await page.getByRole('button', { name: 'Create key' }).click();
      if (i <= 5) {
        await page.getByRole('button', { name: 'I have stored it' }).click();
        await page.getByRole('row', { name: new RegExp(`key ${i}`) }).waitFor();
      }
    }
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match((await alert.textContent()) || '', /your plan allows 5 active keys/);
    guard.check();
    await context.close();
  });
});

describe('webhooks', () => {
  test('an endpoint is added with its secret shown once, its deliveries listed and sent again', async () => {
    // A receiver that fails the first message once, then takes everything.
    /** @type {{id: string, type: string}[]} */
    const received = [];
    let calls = 0;
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => { body += c; });
      req.on('end', () => {
        calls += 1;
        if (calls === 1) { res.writeHead(500).end(); return; }
        received.push({ id: String(req.headers['webhook-id']), type: JSON.parse(body).type });
        res.writeHead(204).end();
      });
    });
    await new Promise((r) => receiver.listen(0, '127.0.0.1', () => r(undefined)));
    const address = /** @type {import('node:net').AddressInfo} */ (receiver.address());
    const hooked = await Service.start({ REDLINE_WEBHOOK_ALLOW_PRIVATE: 'on', REDLINE_WEBHOOK_FIRST_RETRY_MS: '200' });
    const { page, context, guard } = await openPage(browser);
    try {
      await page.goto(`${hooked.base}/signup`);
      await page.getByLabel('E-mail').fill(email('hooks'));
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.getByRole('heading', { name: 'Documents', level: 1 }).waitFor();
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();

      // A URL that is not one is refused at the field, in words.
      await page.getByLabel('URL that receives the messages').fill('not a url');
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await page.getByText('Some fields need attention').waitFor();
      assert.match((await page.locator('.field-error').first().textContent()) || '', /^The URL /);

      const url = `http://127.0.0.1:${address.port}/hook`;
      await page.getByLabel('URL that receives the messages').fill(url);
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      const secret = page.getByLabel('The signing secret');
      await secret.waitFor();
      assert.match((await secret.textContent()) || '', /^whsec_[A-Za-z0-9+/=]+$/);
      await assertAccessible(page, 'webhooks with a new endpoint');
      await screenshot(page, 'webhooks-created');
      await page.getByRole('button', { name: 'I have stored it' }).click();

      // A chat turn of this account completes: its message arrives on the second attempt.
      await page.goto(`${hooked.base}/settings/keys`);
      await page.getByRole('button', { name: 'Create key' }).click();
      const key = (await page.getByLabel('The new API key').textContent()) || '';
      const auth = { Authorization: `Bearer ${key}` };
      assert.equal((await hooked.call('PUT', '/v1/documents/w1', { json: { html: '<p>alpha</p>' }, headers: auth })).status, 200);
      const turn = await hooked.call('POST', '/v1/chat', { json: { session_id: 'w1', message: 'replace "alpha" with "beta"' }, headers: auth });
      assert.equal(turn.status, 200);
      for (let i = 0; i < 300 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(received.map((m) => m.type), ['job.completed']);

      await page.goto(`${hooked.base}/settings/webhooks`);
      const card = page.getByRole('listitem').filter({ hasText: url });
      await card.getByRole('button', { name: 'Deliveries' }).click();
      const row = card.getByRole('row', { name: /job\.completed/ });
      await row.getByText('Delivered').waitFor();
      assert.match((await row.textContent()) || '', /HTTP 204/);
      await row.getByRole('button', { name: 'Send again' }).click();
      for (let i = 0; i < 300 && received.length < 2; i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal(received.length, 2);
      assert.equal(received[1].id, received[0].id, 'sent again under the same webhook-id');

      // A new secret is shown once; disabled, then deleted after a confirmation.
      await card.getByRole('button', { name: 'New secret' }).click();
      await page.getByText('keeps signing for 24 hours').waitFor();
      await page.getByRole('button', { name: 'I have stored it' }).click();
      await card.getByRole('button', { name: 'Disable' }).click();
      await card.getByText('Disabled: disabled by its owner').waitFor();
      await card.getByRole('button', { name: `Delete ${url}` }).click();
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByText('No endpoints yet.').waitFor();
      guard.check();
    } finally {
      await context.close();
      await hooked.stop();
      receiver.close();
    }
  });
});

describe('agent handoff', () => {
  /** An agent account with a started handoff: its key, link and code. */
  async function agentHandoff() {
    const signup = await service.call('POST', '/v1/agents/signup', { json: { name: 'Report bot' } });
    assert.equal(signup.status, 201, JSON.stringify(signup.body));
    const started = await service.call('POST', '/v1/agents/handoff', { headers: { Authorization: `Bearer ${signup.body.api_key}` } });
    assert.equal(started.status, 201, JSON.stringify(started.body));
    return { key: signup.body.api_key, url: started.body.handoff_url, code: started.body.code };
  }

  test('the link opens the claim page; a wrong code counts down, the right one signs in', async () => {
    const { page, context, guard } = await openPage(browser);
    const agent = await agentHandoff();
    await page.goto(agent.url);
    assert.match(new URL(page.url()).pathname, /^\/claim\/ho_/);
    await page.getByRole('heading', { name: "Take over an agent's account" }).waitFor();
    await page.getByText('Report bot').waitFor();
    await page.getByText('5 attempts left').waitFor();
    await assertAccessible(page, 'claim');
    await screenshot(page, 'claim');

    const wrong = agent.code === '000000' ? '111111' : '000000';
    await page.getByLabel('6-digit code from the agent').fill(wrong);
    await page.getByLabel('Your e-mail').fill(email('operator'));
    await page.getByLabel('Choose a password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Take over the account' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.equal(await alert.textContent(), 'That code is not the right one. 4 attempts left before the link is disabled.');
    await page.getByText('4 attempts left.').waitFor();

    await page.getByLabel('6-digit code from the agent').fill(agent.code);
    await page.getByRole('button', { name: 'Take over the account' }).click();
    await page.getByRole('heading', { name: 'Documents', level: 1 }).waitFor();
    // The agent's key keeps working.
    assert.equal((await service.call('GET', '/v1/sessions', { headers: { Authorization: `Bearer ${agent.key}` } })).status, 200);
    guard.check();
    await context.close();
  });

  test('a disabled link and an unknown link are explained', async () => {
    const { page, context, guard } = await openPage(browser);
    const agent = await agentHandoff();
    const token = new URL(agent.url).pathname.split('/').pop();
    const wrong = agent.code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) {
      await service.call('POST', `/v1/agents/handoff/${token}/claim`, { json: { code: wrong, email: email('x'), password: PASSWORD } });
    }
    await page.goto(agent.url);
    await page.getByRole('heading', { name: 'This handoff link cannot be used' }).waitFor();
    await page.getByText('disabled after too many wrong codes').waitFor();
    await assertAccessible(page, 'disabled claim');

    await page.goto(`${service.base}/claim/ho_unknown`);
    await page.getByText('This link has expired or does not exist.').waitFor();
    guard.check();
    await context.close();
  });
});

describe('organizations', () => {
  test('create an organization, act for it: its documents are its own', async () => {
    const { page, context, guard } = await openPage(browser);
    await signUp(page, email('org'));
    await page.getByRole('link', { name: 'Organizations' }).click();
    await page.getByLabel('Name').fill('Acme Legal');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Acme Legal', level: 1 }).waitFor();
    await page.getByRole('cell', { name: 'owner' }).waitFor();
    await page.getByRole('heading', { name: 'Organization keys' }).waitFor();
    await assertAccessible(page, 'organization');
    await screenshot(page, 'organization');

    // An address is invited, not added: the invitation waits, and can be withdrawn.
    const nobody = email('nobody');
    await page.getByLabel('Their e-mail').fill(nobody);
    await page.getByRole('button', { name: 'Invite' }).click();
    await page.getByRole('status').filter({ hasText: `An invitation was mailed to ${nobody}` }).waitFor();
    await page.getByRole('button', { name: `Withdraw the invitation of ${nobody}` }).click();
    await page.getByRole('button', { name: 'Withdraw', exact: true }).click();
    await page.getByRole('button', { name: `Withdraw the invitation of ${nobody}` }).waitFor({ state: 'detached' });

    // A colleague is invited, accepts from the mailed link in their own browser, is listed by
    // e-mail, and removed after a confirmation.
    const colleague = await makeUser('colleague');
    await page.getByLabel('Their e-mail').fill(colleague);
    await page.getByLabel('Role').selectOption('admin');
    await page.getByRole('button', { name: 'Invite' }).click();
    await page.getByRole('status').filter({ hasText: `An invitation was mailed to ${colleague}` }).waitFor();
    const link = await mailedLink(service, colleague, '/invitations');
    const theirs = await openPage(browser);
    await theirs.page.goto(link);
    await theirs.page.getByRole('heading', { name: 'Sign in to Redline' }).waitFor();
    await theirs.page.getByLabel('E-mail').fill(colleague);
    await theirs.page.getByLabel('Password').fill(PASSWORD);
    await theirs.page.getByRole('button', { name: 'Sign in' }).click();
    await theirs.page.getByText('invites you to join Acme Legal as an admin').waitFor();
    await assertAccessible(theirs.page, 'invitation');
    await theirs.page.getByRole('button', { name: 'Join Acme Legal' }).click();
    await theirs.page.getByRole('status').filter({ hasText: 'You are now a member of Acme Legal' }).waitFor();
    await theirs.context.close();
    await page.reload();
    const row = page.getByRole('row', { name: new RegExp(colleague.replace(/[.+]/g, '\\$&')) });
    await row.getByRole('cell', { name: 'admin' }).waitFor();
    await row.getByRole('button', { name: `Remove ${colleague}` }).click();
    await page.getByRole('button', { name: 'Remove', exact: true }).click();
    await row.waitFor({ state: 'detached' });

    // Act for the organization and make a document there.
    await page.getByLabel('Acting for').selectOption({ label: 'Acme Legal' });
    await page.getByRole('link', { name: 'Documents' }).click();
    await page.getByText('No documents yet').waitFor();
    await page.getByText('Empty', { exact: true }).click();
    await page.getByLabel('Title').fill('Org contract');
    await page.getByRole('button', { name: 'Create document' }).click();
    await page.locator('main h1', { hasText: 'Org contract' }).first().waitFor();
    await page.getByRole('link', { name: '← Documents' }).click();
    await page.getByRole('link', { name: 'Org contract' }).waitFor();

    // The user's own documents do not show it.
    await page.getByLabel('Acting for').selectOption({ index: 0 });
    await page.getByText('No documents yet').waitFor();
    guard.check();
    await context.close();
  });

  test('a session acts for an organization only when its user is a member', async () => {
    const { page, context } = await openPage(browser);
    await signUp(page, email('stranger'));
    const org = service.admin(['create-org', '--name', 'Other Co', '--owner-email', await makeUser('owner')]);
    const status = await page.evaluate(async (id) => {
      const res = await fetch('/v1/sessions', { headers: { 'Redline-Organization': id } });
      return { status: res.status, body: await res.json() };
    }, org.org_id);
    assert.equal(status.status, 403);
    assert.match(status.body.detail, /not a member/);
    await context.close();
  });
});

/** A web user made through the API; its e-mail. @param {string} who */
async function makeUser(who) {
  const address = email(who);
  const res = await service.call('POST', '/v1/auth/signup', { json: { email: address, password: PASSWORD } });
  assert.equal(res.status, 201);
  return address;
}

describe('documents', () => {
  test('upload a DOCX with progress, see it listed and open it', async () => {
    const { page, context, guard } = await openPage(browser);
    await signUp(page, email('docs'));
    await assertAccessible(page, 'documents');
    const docx = join(repo, 'tests', 'fixtures', 'corpus', 'docx', 'mammoth-footnotes.docx');
    await page.getByLabel('Choose a file').setInputFiles(docx);
    await page.waitForURL(/\/documents\/mammoth-footnotes-/);
    await page.locator('article.document').waitFor();
    assert.ok(((await page.locator('article.document').textContent()) || '').length > 20, 'the document shows');
    await assertAccessible(page, 'document');
    await screenshot(page, 'document');
    await page.getByRole('link', { name: '← Documents' }).click();
    const row = page.getByRole('row', { name: /mammoth-footnotes|Ouch/ });
    await row.first().waitFor();
    await screenshot(page, 'documents');

    // An unsupported file is refused in words, naming the file.
    await page.getByLabel('Choose a file').setInputFiles({ name: 'old.doc', mimeType: 'application/msword', buffer: Buffer.from('legacy') });
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match((await alert.textContent()) || '', /^old\.doc: .*\.doc/);

    // Delete asks first.
    await row.first().getByRole('button', { name: /^Delete/ }).click();
    await page.getByRole('button', { name: 'Delete for ever' }).click();
    await page.getByText('No documents yet').waitFor();
    guard.check();
    await context.close();
  });

  test('a document from a template', async () => {
    const { page, context, guard } = await openPage(browser);
    await signUp(page, email('tpl'));
    await page.getByText('From a template').click();
    await page.getByLabel('Template', { exact: true }).waitFor();
    await page.getByLabel('Title (optional)').fill('Board memo');
    await page.getByRole('button', { name: 'Create from template' }).click();
    await page.waitForURL(/\/documents\/board-memo-/);
    await page.locator('article.document').waitFor();
    guard.check();
    await context.close();
  });
});

describe('usage', () => {
  test('the meter, redeeming a code, and a wrong code in words', async () => {
    const { page, context, guard } = await openPage(browser);
    await signUp(page, email('usage'));
    const code = `WELCOME${Date.now().toString(36).toUpperCase()}`;
    service.admin(['create-promo', '--code', code, '--name', 'Welcome pack', '--ops', '250']);
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByText('0 of 500 operations used').waitFor();
    await page.getByText('Count starts again').waitFor();
    // The rule billing applies (docs/api.md, "Usage and billing"): every chat turn counts.
    await page.getByText('each chat turn counts one operation, a question as much as an edit').waitFor();
    await assertAccessible(page, 'usage');

    await page.getByLabel('Promotion code').fill('NOSUCHCODE');
    await page.getByRole('button', { name: 'Redeem' }).click();
    await page.getByRole('alert').filter({ hasText: 'Unknown or expired promotion code' }).waitFor();

    await page.getByLabel('Promotion code').fill(code);
    await page.getByRole('button', { name: 'Redeem' }).click();
    await page.getByRole('status').filter({ hasText: '250 operations added (Welcome pack).' }).waitFor();
    await page.getByText('250 of 250 operations left').waitFor();
    await screenshot(page, 'usage');
    guard.check();
    await context.close();
  });

  test('a month used up is said in words, with the day it comes back', async () => {
    const { page, context, guard } = await openPage(browser);
    await signUp(page, email('spent'));
    const me = await page.evaluate(async () => (await fetch('/v1/users/me')).json());
    service.admin(['set-plan', '--user-id', me.user_id, '--plan', 'free', '--monthly-limit', '0']);
    await page.getByRole('link', { name: 'Usage' }).click();
    const alert = page.getByRole('alert').filter({ hasText: "This month's operations are used up" });
    await alert.waitFor();
    assert.match((await alert.textContent()) || '', /refused until .*\d/);
    guard.check();
    await context.close();
  });
});

describe('security', () => {
  test('every page carries the security headers and a strict policy', async () => {
    for (const path of ['/', '/signin', '/documents', '/settings/keys', '/claim/ho_x']) {
      const res = await service.call('GET', path);
      assert.equal(res.status, 200, path);
      const csp = res.headers.get('content-security-policy') || '';
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
    }
  });

  test('the session cookie sent from another origin is refused', async () => {
    const address = await makeUser('csrf');
    const login = await service.call('POST', '/v1/auth/login', { json: { email: address, password: PASSWORD } });
    const cookie = (login.headers.get('set-cookie') || '').split(';')[0];
    assert.match(cookie, /^redline_session=ws_/);
    const foreign = await service.call('GET', '/v1/sessions', { headers: { Cookie: cookie, Origin: 'https://evil.example' } });
    assert.equal(foreign.status, 401);
    const write = await service.call('POST', '/v1/users/me/api-keys', { json: { name: 'x' }, headers: { Cookie: cookie, Origin: 'https://evil.example' } });
    assert.equal(write.status, 401);
    const own = await service.call('GET', '/v1/sessions', { headers: { Cookie: cookie, Origin: service.base } });
    assert.equal(own.status, 200);
  });

  test('the app fits a 375 px phone', async () => {
    const { page, context, guard } = await openPage(browser, { width: 375, height: 812 });
    await signUp(page, email('phone'));
    for (const path of ['/documents', '/usage', '/settings/keys', '/settings/organizations']) {
      await page.goto(`${service.base}${path}`);
      await page.locator('main h1').waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `${path} scrolls sideways by ${overflow} px`);
    }
    await screenshot(page, 'phone-documents');
    guard.check();
    await context.close();
  });

  test('no page of the app loads anything from another origin', async () => {
    const { page, context, guard } = await openPage(browser);
    const watch = await watchOrigins(context, service.base);
    const token = await service.signedInUser();
    await context.addCookies([{ name: 'redline_session', value: token, url: service.base, httpOnly: true, sameSite: 'Lax' }]);
    const pages = appPages();
    assert.ok(pages.length >= 10, `PAGES read from crates/web/src/lib.rs: ${pages}`);
    for (const path of pages) {
      await page.goto(`${service.base}${path}`, { waitUntil: 'networkidle' });
      await page.locator('main').first().waitFor();
      assert.deepEqual(watch.foreign, [], `${path}: no request to another origin`);
    }
    watch.check();
    guard.check();
    await context.close();
  });

  test('the vendored modules are the pinned versions', () => {
    const lock = JSON.parse(readFileSync(join(repo, 'crates', 'web', 'package-lock.json'), 'utf8'));
    const thirdParty = readFileSync(join(repo, 'crates', 'web', 'THIRD_PARTY.md'), 'utf8');
    for (const name of ['preact', 'htm', 'diff', 'swagger-ui-dist']) {
      const version = lock.packages[`node_modules/${name}`].version;
      assert.ok(thirdParty.includes(`## ${name} ${version}`), `${name} ${version} in THIRD_PARTY.md`);
    }
  });
});

/**
 * The app's page paths, as `PAGES` of crates/web/src/lib.rs lists them, each parameter given a
 * value (a document, an organization or a claim that does not exist: each page says so).
 */
function appPages() {
  const source = readFileSync(join(repo, 'crates', 'web', 'src', 'lib.rs'), 'utf8');
  const list = source.match(/pub const PAGES: &\[&str\] = &\[([^\]]*)\];/);
  assert.ok(list, 'PAGES in crates/web/src/lib.rs');
  /** @type {Record<string, string>} */
  const values = { session_id: 'no-such-document', org_id: '00000000-0000-4000-8000-000000000000', token: 'ho_unknown' };
  return [...list[1].matchAll(/"([^"]+)"/g)].map((m) =>
    m[1].replace(/\{(\w+)\}/g, (_, name) => {
      assert.ok(name in values, `a value for {${name}} of ${m[1]}`);
      return values[name];
    }),
  );
}

describe('API reference', () => {
  test('/docs shows the OpenAPI document from this origin alone, with no policy violation', async () => {
    const { page, context, guard } = await openPage(browser);
    const watch = await watchOrigins(context, service.base);
    await page.goto(`${service.base}/docs`);
    // Rendered: the document's title and an operation of each of two tags.
    await page.getByRole('heading', { name: /^Redline/ }).first().waitFor();
    await page.getByText('Creates a web-app account on the free plan.').waitFor();
    const operation = page.getByRole('button', { name: /^GET \/v1\/sessions Lists the caller's sessions/ });
    await operation.waitFor();

    // An operation opens, and "Try it out" calls the API on this origin (no credential: 401).
    await operation.click();
    await page.getByRole('button', { name: 'Try it out' }).click();
    const answered = page.waitForResponse((r) => r.url().startsWith(`${service.base}/v1/sessions`));
    await page.getByRole('button', { name: 'Execute' }).click();
    assert.equal((await answered).status(), 401);

    watch.check();
    guard.check();
    await context.close();
  });

  test('/docs refuses to be framed, and names no script of another origin', async () => {
    const res = await service.call('GET', '/docs');
    assert.equal(res.status, 200);
    const csp = res.headers.get('content-security-policy') || '';
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'( 'sha256-[^']+')*;/, 'scripts from this origin only');
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    const html = String(res.body);
    assert.doesNotMatch(html, /:\/\/|"\/\//, 'no address of another origin');
    assert.doesNotMatch(html, /<script(?![^>]*\ssrc=)/, 'no inline script');

    // A page of another origin that frames it gets nothing: the browser refuses.
    const { page, context } = await openPage(browser);
    const refused = page.waitForEvent('console', { predicate: (m) => /frame-ancestors 'none'/.test(m.text()), timeout: 10_000 });
    await page.setContent(`<iframe title="framed" src="${service.base}/docs"></iframe>`);
    await refused;
    assert.ok(page.frames().every((f) => !f.url().startsWith(service.base)), 'the frame shows no page of ours');
    await context.close();
  });
});
