// @ts-check
// What the browser tests share: the real `redline` binary on a fresh data folder and a free
// port, Debian's Chromium driven by playwright-core, axe-core, and guards that fail a test on
// any script error, CSP violation or failed request the test did not expect.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const repo = resolve(here, '..', '..', '..');
const target = process.env.CARGO_TARGET_DIR || join(repo, 'target');
export const binary = process.env.REDLINE_BIN || join(target, 'release', 'redline');
const fakeLlmBinary = process.env.REDLINE_FAKE_LLM_BIN || join(target, 'release', 'redline-fake-llm');
const chromiumPath = process.env.REDLINE_CHROMIUM || '/usr/bin/chromium';
/** Where screenshots go when asked (REDLINE_SCREENSHOTS=1): docs/screenshots. */
const screenshots = process.env.REDLINE_SCREENSHOTS === '1' ? join(repo, 'docs', 'screenshots') : null;

async function freePort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => done(port));
    });
  });
}

/** A running server on its own data folder. */
export class Service {
  /** @param {string} base @param {string} dataDir @param {import('node:child_process').ChildProcess} child */
  constructor(base, dataDir, child) {
    this.base = base;
    this.dataDir = dataDir;
    this.child = child;
  }

  /** @param {Record<string, string>} [extraEnv] settings over the defaults (an LLM, say) */
  static async start(extraEnv = {}) {
    const dataDir = mkdtempSync(join(tmpdir(), 'redline-web-'));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = {
      ...process.env,
      REDLINE_BIND: `127.0.0.1:${port}`,
      REDLINE_DATA_DIR: dataDir,
      REDLINE_PUBLIC_BASE_URL: base,
      REDLINE_LLM_PROVIDER: 'builtin',
      REDLINE_SIGNUP_COOLDOWN_SECS: '0',
      REDLINE_LOG: 'warn',
      ...extraEnv,
    };
    const child = spawn(binary, ['serve'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
    const service = new Service(base, dataDir, child);
    for (let i = 0; i < 300; i++) {
      try {
        const res = await fetch(`${base}/healthz`);
        if (res.ok) return service;
      } catch {
        // not listening yet
      }
      if (child.exitCode !== null) throw new Error(`redline exited with ${child.exitCode}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill();
    throw new Error('redline did not start within 30 s');
  }

  /** `redline admin …` on the same data folder; its JSON answer. @param {string[]} args */
  admin(args) {
    const out = execFileSync(binary, ['admin', ...args], {
      env: { ...process.env, REDLINE_DATA_DIR: this.dataDir, REDLINE_LOG: 'error' },
      encoding: 'utf8',
    });
    return JSON.parse(out);
  }

  /**
   * A JSON call of the API from outside the browser.
   * @param {string} method
   * @param {string} path
   * @param {{json?: unknown, headers?: Record<string, string>}} [options]
   */
  async call(method, path, { json = undefined, headers = {} } = {}) {
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: { ...(json === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      body: json === undefined ? undefined : JSON.stringify(json),
      redirect: 'manual',
    });
    const text = await res.text();
    let body = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    return { status: res.status, body, headers: res.headers };
  }

  /** A new web-app user, signed in: its session token (also the `redline_session` cookie's value). */
  async signedInUser() {
    const address = `bench-${Date.now()}-${Math.random().toString(36).slice(2, 6)}@example.com`;
    const password = 'correct horse battery';
    await this.call('POST', '/v1/auth/signup', { json: { email: address, password } });
    const login = await this.call('POST', '/v1/auth/login', { json: { email: address, password } });
    return String(login.body.token);
  }

  async stop() {
    this.child.kill('SIGTERM');
    await new Promise((r) => (this.child.exitCode !== null ? r(null) : this.child.once('exit', r)));
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

export async function launch() {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * A page whose script errors, CSP violations and unexpected failed requests are collected;
 * `guard.check()` fails the test with them.
 * @param {import('playwright-core').Browser} browser
 * @param {{width?: number, height?: number}} [viewport]
 */
export async function openPage(browser, viewport = { width: 1200, height: 900 }) {
  const context = await browser.newContext({ viewport: { width: viewport.width || 1200, height: viewport.height || 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  const page = await context.newPage();
  /** @type {string[]} */
  const problems = [];
  page.on('pageerror', (e) => problems.push(`script error: ${e.message}`));
  page.on('console', (m) => {
    const text = m.text();
    if (/Content Security Policy|Refused to/i.test(text)) problems.push(`CSP: ${text} at ${JSON.stringify(m.location())}`);
  });
  const guard = {
    problems,
    check() {
      assert.deepEqual(problems, [], 'no script error and no CSP violation');
    },
  };
  return { context, page, guard };
}

/**
 * Watches a browser context: every request of its pages, frames and workers, and every
 * `securitypolicyviolation` event in its documents (also those the browser does not log, such
 * as a library's `try { Function('') }` probe). `check()` fails on a request to any origin but
 * `base`'s and on any violation (a request that the policy blocks shows as both). Call it
 * before the context opens a page.
 * @param {import('playwright-core').BrowserContext} context
 * @param {string} base the server's origin
 */
export async function watchOrigins(context, base) {
  const origin = new URL(base).origin;
  /** @type {string[]} */
  const foreign = [];
  /** @type {string[]} */
  const violations = [];
  context.on('request', (request) => {
    const url = request.url();
    // data: and blob: URLs are the page's own bytes, not a request to anyone.
    if (/^(data|blob):/.test(url)) return;
    if (new URL(url).origin !== origin) foreign.push(`${request.method()} ${url}`);
  });
  await context.exposeBinding('__redlineViolation', (_source, /** @type {string} */ text) => {
    violations.push(text);
  });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      // @ts-ignore: the binding exposed above
      window.__redlineViolation(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber}:${e.columnNumber}`);
    });
  });
  return {
    foreign,
    violations,
    check() {
      assert.deepEqual(foreign, [], `no request to an origin other than ${origin}`);
      assert.deepEqual(violations, [], 'no Content-Security-Policy violation');
    },
  };
}

const axeSource = readFileSync(join(here, '..', 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

/**
 * Runs axe-core on the page as it is (evaluated through the DevTools protocol, which the page's
 * CSP does not govern) and fails on a serious or critical violation.
 * @param {import('playwright-core').Page} page
 * @param {string} name
 */
export async function assertAccessible(page, name) {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    // @ts-ignore: axe is the script evaluated above
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return result.violations
      .filter((/** @type {any} */ v) => v.impact === 'serious' || v.impact === 'critical')
      .map((/** @type {any} */ v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((/** @type {any} */ n) => n.target.join(' ')).join(', ')}`);
  });
  assert.deepEqual(violations, [], `axe on ${name}`);
}

/**
 * Saves a screenshot under docs/screenshots when REDLINE_SCREENSHOTS=1: the whole page, or
 * with `screen` what the screen shows (a long page on a phone).
 * @param {import('playwright-core').Page} page
 * @param {string} name
 * @param {{screen?: boolean}} [options]
 */
export async function screenshot(page, name, options = {}) {
  if (!screenshots) return;
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: !options.screen });
}

/** A unique e-mail address for a test user. @param {string} who */
export function email(who) {
  return `${who}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}@example.com`;
}

/** The repository's OpenAI-wire fake (crates/fake-llm), scripted over its control endpoints. */
export class FakeLlm {
  /** @param {string} baseUrl @param {import('node:child_process').ChildProcess} child */
  constructor(baseUrl, child) {
    this.baseUrl = baseUrl;
    this.child = child;
  }

  static async start() {
    const child = spawn(fakeLlmBinary, [], { stdio: ['ignore', 'pipe', 'inherit'] });
    const baseUrl = await new Promise((done, fail) => {
      let out = '';
      child.stdout?.on('data', (chunk) => {
        out += chunk;
        const line = out.split('\n')[0];
        if (out.includes('\n')) done(line.trim());
      });
      child.once('exit', (code) => fail(new Error(`redline-fake-llm exited with ${code}`)));
    });
    return new FakeLlm(String(baseUrl), child);
  }

  /** The settings that point the service at this fake. */
  env() {
    return { REDLINE_LLM_PROVIDER: 'openai', REDLINE_OPENAI_BASE_URL: this.baseUrl, REDLINE_OPENAI_API_KEY: 'sk-fake', REDLINE_OPENAI_MODEL: 'fake-model' };
  }

  /** Queues steps (see crates/fake-llm). @param {unknown} spec */
  async script(spec) {
    const res = await fetch(`${this.baseUrl.replace(/\/v1$/, '')}/_fake/script`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(spec) });
    assert.equal(res.status, 204, 'the fake takes the script');
  }

  /** What the service asked, in order. @returns {Promise<any[]>} */
  async requests() {
    const res = await fetch(`${this.baseUrl.replace(/\/v1$/, '')}/_fake/requests`);
    return res.json();
  }

  async stop() {
    this.child.kill('SIGTERM');
    await new Promise((r) => (this.child.exitCode !== null ? r(null) : this.child.once('exit', r)));
  }
}

/**
 * The link to `page` mailed to `to` (the outbox's `.eml` files), waiting for it.
 * @param {Service} service
 * @param {string} to
 * @param {string} [page]
 */
export async function mailedLink(service, to, page = '/reset-password') {
  const dir = join(service.dataDir, 'outbox');
  for (let i = 0; i < 100; i++) {
    const files = existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith('.eml')) : [];
    for (const f of files) {
      // Quoted-printable: soft line breaks undone, `=` decoded.
      const text = readFileSync(join(dir, f), 'utf8').replace(/=\r?\n/g, '').replaceAll('=3D', '=');
      const m = new RegExp(`(http\\S+${page}#token=[A-Za-z0-9_-]+)`).exec(text);
      if (text.includes(`To: ${to}`) && m) return m[1];
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no mail with a ${page} link to ${to}`);
}
