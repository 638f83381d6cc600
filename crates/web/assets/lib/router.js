// @ts-check
// A small history router: the server answers the app's page for each of its paths.
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';

/** @param {string} to @param {boolean} [replace] */
export function navigate(to, replace = false) {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  window.dispatchEvent(new Event('redline:navigate'));
}

/** The current path, kept up to date. */
export function usePath() {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    window.addEventListener('popstate', update);
    window.addEventListener('redline:navigate', update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener('redline:navigate', update);
    };
  }, []);
  return path;
}

/**
 * A link inside the app: a normal anchor (it opens in a new tab with a modifier), routed here.
 * @param {{href: string, children?: any, class?: string, 'aria-current'?: string}} props
 */
export function Link(props) {
  /** @param {MouseEvent} e */
  const onClick = (e) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.href);
  };
  return html`<a ...${props} onClick=${onClick}>${props.children}</a>`;
}

/**
 * The address of a document of the account the tab acts for: an organization's carries it
 * (`?org=`), so that the link opens the same document in a new tab or for a colleague.
 * @param {string} sessionId @param {string | null} org
 */
export function documentPath(sessionId, org) {
  const path = `/documents/${encodeURIComponent(sessionId)}`;
  return org ? `${path}?org=${encodeURIComponent(org)}` : path;
}

/** The organization the address names (`?org=`), if any. */
export function orgInAddress() {
  return new URLSearchParams(location.search).get('org');
}
