// @ts-check
// Security: change the password, and the signed-in sessions with "sign out" for one or all.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../lib/html.js';
import { api, formatDate } from '../lib/api.js';
import { navigate } from '../lib/router.js';
import { ConfirmButton, Field, Notice, useAction } from '../lib/ui.js';
import { PASSWORD_HINT } from './account.js';

/** @param {{onSignedOut: () => void}} props */
export function Security({ onSignedOut }) {
  return html`<section>
    <h1>Security</h1>
    <${ChangePassword} />
    <${SignedIn} onSignedOut=${onSignedOut} />
  </section>`;
}

function ChangePassword() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [done, setDone] = useState(/** @type {string | null} */ (null));
  const action = useAction();
  /** @param {Event} e */
  const submit = (e) => {
    e.preventDefault();
    setDone(null);
    action.run(async () => {
      const body = await api('POST', '/v1/users/me/password', { current_password: current, new_password: next });
      setCurrent('');
      setNext('');
      const n = body.other_sessions_ended;
      setDone(`Password changed. ${n === 0 ? 'No other session was signed in.' : n === 1 ? 'One other session was signed out.' : `${n} other sessions were signed out.`}`);
    });
  };
  return html`<form class="inline" onSubmit=${submit} noValidate>
    <h2>Change the password</h2>
    <p>Every other browser signed in to your account is signed out; this one stays.</p>
    <${Notice} message=${action.error} />
    ${done && html`<p role="status">${done}</p>`}
    <${Field} label="Current password" name="current_password" type="password" autocomplete="current-password" value=${current} onInput=${setCurrent} error=${action.fields.current_password} required />
    <${Field} label="New password" name="new_password" type="password" autocomplete="new-password" hint=${PASSWORD_HINT} value=${next} onInput=${setNext} error=${action.fields.new_password} required />
    <button type="submit" class="primary" disabled=${action.busy}>${action.busy ? 'Changing…' : 'Change the password'}</button>
  </form>`;
}

/** @param {{onSignedOut: () => void}} props */
function SignedIn({ onSignedOut }) {
  const [sessions, setSessions] = useState(/** @type {any[] | null} */ (null));
  const list = useAction();
  const end = useAction();
  const load = () =>
    list.run(async () => {
      const body = await api('GET', '/v1/users/me/sessions');
      setSessions(body.sessions);
    });
  useEffect(() => {
    load();
  }, []);
  const everywhere = () =>
    end.run(async () => {
      await api('DELETE', '/v1/users/me/sessions');
      onSignedOut();
      navigate('/signin', true);
    });
  /** @param {any} s */
  const signOut = (s) =>
    end.run(async () => {
      await api('DELETE', `/v1/users/me/sessions/${encodeURIComponent(s.session_id)}`);
      if (s.current) {
        onSignedOut();
        navigate('/signin', true);
      } else {
        await load();
      }
    });
  return html`<div>
    <h2>Signed-in sessions</h2>
    <p>A session ends 30 days after sign-in, or after a week without use.</p>
    <${Notice} message=${list.error || end.error} />
    ${sessions === null ? html`<p class="loading">Loading the sessions…</p>` : html`
      <table class="list">
        <thead><tr><th scope="col">Browser</th><th scope="col">Address</th><th scope="col">Signed in</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>
          ${sessions.map((s) => html`<tr key=${s.session_id}>
            <td data-label="Browser">${s.user_agent || 'Unknown browser'}${s.current && html` <strong>(this one)</strong>`}</td>
            <td data-label="Address">${s.ip_address || 'Unknown'}</td>
            <td data-label="Signed in">${formatDate(s.created_at)}</td>
            <td data-label="Last used">${formatDate(s.last_seen_at)}</td>
            <td><button type="button" disabled=${end.busy} onClick=${() => signOut(s)}>${s.current ? 'Sign out' : 'Sign this one out'}</button></td>
          </tr>`)}
        </tbody>
      </table>`}
    <${ConfirmButton}
      label="Sign out everywhere"
      question="Sign out every session of your account, this one included?"
      confirmLabel="Sign out everywhere"
      busy=${end.busy}
      onConfirm=${everywhere}
    />
  </div>`;
}
