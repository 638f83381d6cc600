// @ts-check
// The web app's shell: who is signed in, the navigation, the organization the app acts for,
// and which page the path names.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { html } from './lib/html.js';
import { api, actingFor, setActingFor, ApiError } from './lib/api.js';
import { Link, navigate, orgInAddress, usePath } from './lib/router.js';
import { Notice } from './lib/ui.js';
import { SignIn, SignUp, ForgotPassword, ResetPassword, VerifyEmail, VerifyBanner } from './pages/account.js';
import { Security } from './pages/security.js';
import { Invitation } from './pages/invitation.js';
import { Claim } from './pages/claim.js';
import { Keys } from './pages/keys.js';
import { Webhooks } from './pages/webhooks.js';
import { Organizations, Organization } from './pages/organizations.js';
import { Usage } from './pages/usage.js';
import { Documents } from './pages/documents.js';
import { Editor } from './pages/editor.js';
import { clearAllDrafts } from './editor/drafts.js';

/** @typedef {{user_id: string, email: string | null, email_verified: boolean, subscription_tier: string, organizations: {org_id: string, name: string, role: string}[]}} Me */

/** Pages anyone may open. */
const PUBLIC = [/^\/signin$/, /^\/signup$/, /^\/forgot-password$/, /^\/reset-password$/, /^\/verify-email$/, /^\/claim\/[^/]+$/];

function App() {
  const path = usePath();
  const [me, setMe] = useState(/** @type {Me | null | undefined} */ (undefined));
  const [loadError, setLoadError] = useState(/** @type {string | null} */ (null));
  const [quota, setQuota] = useState(/** @type {string | null} */ (null));
  const [org, setOrg] = useState(actingFor());

  const refresh = async () => {
    try {
      const body = await api('GET', '/v1/users/me');
      setMe(body);
      setLoadError(null);
      // An organization the user has left is no longer acted for.
      if (actingFor() && !body.organizations.some((/** @type {{org_id: string}} */ o) => o.org_id === actingFor())) {
        setActingFor(null);
        setOrg(null);
      }
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) setMe(null);
      else setLoadError(e instanceof Error ? e.message : String(e));
    }
  };

  useEffect(() => {
    refresh();
    const signedOut = () => setMe(null);
    const outOfOps = (/** @type {Event} */ e) => setQuota(/** @type {CustomEvent} */ (e).detail);
    window.addEventListener('redline:unauthorized', signedOut);
    window.addEventListener('redline:quota', outOfOps);
    return () => {
      window.removeEventListener('redline:unauthorized', signedOut);
      window.removeEventListener('redline:quota', outOfOps);
    };
  }, []);

  useEffect(() => {
    const title = document.querySelector('main h1');
    document.title = title ? `${title.textContent} · Redline` : 'Redline';
  });

  const isPublic = PUBLIC.some((p) => p.test(path));
  if (me === undefined && !isPublic) {
    return html`<main id="main"><p class="loading">${loadError ? html`<${Notice} message=${loadError} />` : 'Loading…'}</p></main>`;
  }

  const signedIn = async () => {
    await refresh();
    // Back to the page that asked for a sign-in, or to the documents.
    const here = location.pathname;
    const stay = !PUBLIC.some((p) => p.test(here)) && here !== '/';
    navigate(stay ? here + location.search + location.hash : '/documents', true);
  };

  if (path === '/signup') return html`<${Bare}><${SignUp} onSignedIn=${signedIn} /><//>`;
  if (path === '/forgot-password') return html`<${Bare}><${ForgotPassword} /><//>`;
  if (path === '/reset-password') return html`<${Bare}><${ResetPassword} /><//>`;
  if (path === '/verify-email') return html`<${Bare}><${VerifyEmail} onVerified=${refresh} /><//>`;
  if (path.startsWith('/claim/')) {
    return html`<${Bare}><${Claim} token=${decodeURIComponent(path.slice('/claim/'.length))} onSignedIn=${signedIn} /><//>`;
  }
  if (path === '/signin' || !me) {
    return html`<${Bare}><${SignIn} onSignedIn=${signedIn} /><//>`;
  }

  /** @param {string | null} id */
  const choose = (id) => {
    setActingFor(id);
    setOrg(id);
    // A document belongs to one account: acting for another goes back to its documents.
    if (/^\/documents\/./.test(location.pathname)) navigate('/documents');
    else if (orgInAddress()) navigate(location.pathname, true);
  };

  // A link that names an organization (`?org=`) opens in its name when the user is a member:
  // shared links and new tabs show what they point at.
  const named = orgInAddress();
  const strange = named !== null && !me.organizations.some((o) => o.org_id === named);
  if (named && !strange && named !== org) {
    setActingFor(named);
    setOrg(named);
    return null;
  }

  return html`<${Shell} me=${me} path=${path} org=${org} onChoose=${choose} onSignedOut=${() => setMe(null)}>
    ${me.email && !me.email_verified && html`<${VerifyBanner} email=${me.email} />`}
    ${strange && html`<div class="banner" role="alert">This link belongs to an organization you are not a member of, so Redline shows what the account you act for has instead. Ask the organization's owner to invite you.</div>`}
    ${quota && html`<div class="banner" role="alert">${quota} <button type="button" onClick=${() => setQuota(null)}>Dismiss</button></div>`}
    ${page(path, me, org, refresh, () => setMe(null))}
  <//>`;
}

/**
 * @param {string} path
 * @param {Me} me
 * @param {string | null} org
 * @param {() => Promise<void>} refresh
 * @param {() => void} signedOut
 */
function page(path, me, org, refresh, signedOut) {
  let m;
  if (path === '/' || path === '/documents') {
    const name = org ? me.organizations.find((o) => o.org_id === org)?.name || null : null;
    return html`<${Documents} key=${org || 'me'} orgName=${name} />`;
  }
  if ((m = /^\/documents\/(.+)$/.exec(path))) return html`<${Editor} key=${`${org || 'me'}/${m[1]}`} sessionId=${decodeURIComponent(m[1])} me=${me} org=${org} />`;
  if (path === '/usage') return html`<${Usage} key=${org || 'me'} me=${me} org=${org} />`;
  if (path === '/settings' || path === '/settings/keys') return html`<${Keys} />`;
  if (path === '/settings/webhooks') {
    const name = org ? me.organizations.find((o) => o.org_id === org)?.name : null;
    return html`<${Webhooks} key=${org || 'me'} owner=${name ? `the organization ${name}` : 'your account'} />`;
  }
  if (path === '/invitations') return html`<${Invitation} me=${me} onChanged=${refresh} />`;
  if (path === '/settings/security') return html`<${Security} onSignedOut=${() => { setActingFor(null); clearAllDrafts(); signedOut(); }} />`;
  if (path === '/settings/organizations') return html`<${Organizations} me=${me} onChanged=${refresh} />`;
  if ((m = /^\/settings\/organizations\/([^/]+)$/.exec(path))) {
    return html`<${Organization} me=${me} orgId=${decodeURIComponent(m[1])} onChanged=${refresh} />`;
  }
  return html`<section><h1>Page not found</h1><p>There is no page at this address. <${Link} href="/documents">Go to your documents</${Link}>.</p></section>`;
}

/** @param {{children?: any}} props */
function Bare({ children }) {
  return html`<div class="bare">
    <header class="bare-header"><a class="brand" href="/">Redline</a></header>
    <main id="main">${children}</main>
  </div>`;
}

/**
 * @param {{me: Me, path: string, org: string | null, onChoose: (id: string | null) => void, onSignedOut: () => void, children?: any}} props
 */
function Shell({ me, path, org, onChoose, onSignedOut, children }) {
  const [signOutError, setSignOutError] = useState(/** @type {string | null} */ (null));
  const signOut = async () => {
    try {
      await api('POST', '/v1/auth/logout');
      setActingFor(null);
      clearAllDrafts();
      onSignedOut();
      navigate('/signin', true);
    } catch (e) {
      setSignOutError(e instanceof Error ? e.message : String(e));
    }
  };
  const nav = [
    ['/documents', 'Documents'],
    ['/usage', 'Usage'],
    ['/settings/keys', 'API keys'],
    ['/settings/webhooks', 'Webhooks'],
    ['/settings/organizations', 'Organizations'],
    ['/settings/security', 'Security'],
  ];
  const current = (/** @type {string} */ href) => path === href || (href === '/documents' && (path === '/' || path.startsWith('/documents/'))) || (href !== '/documents' && path.startsWith(`${href}/`));
  return html`<div class="shell">
    <a class="skip" href="#main">Skip to the page</a>
    <header class="top">
      <a class="brand" href="/documents">Redline</a>
      <nav aria-label="Main">
        <ul>
          ${nav.map(([href, label]) => html`<li><${Link} href=${href} aria-current=${current(href) ? 'page' : undefined}>${label}<//></li>`)}
        </ul>
      </nav>
      <div class="account">
        <label class="acting">
          <span>Acting for</span>
          <select value=${org || ''} onChange=${(/** @type {any} */ e) => onChoose(e.currentTarget.value || null)}>
            <option value="">${me.email || 'My account'}</option>
            ${me.organizations.map((o) => html`<option value=${o.org_id}>${o.name}</option>`)}
          </select>
        </label>
        <button type="button" onClick=${signOut}>Sign out</button>
      </div>
    </header>
    <${Notice} message=${signOutError} />
    <main id="main" tabindex="-1" class=${path.startsWith('/documents/') ? 'wide' : undefined}>${children}</main>
  </div>`;
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(html`<${App} />`, root);
}
