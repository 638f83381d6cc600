// @ts-check
// An agent's operator takes its account over: the link's summary, then the 6-digit code, an
// e-mail and a password. The account becomes theirs; the agent's keys keep working.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../lib/html.js';
import { api, ApiError, formatDate } from '../lib/api.js';
import { Field, Notice, useAction } from '../lib/ui.js';

/** Why a link cannot be used, in words, by status. */
const DEAD_LINK = {
  404: 'This link has expired or does not exist. Links work for 24 hours: ask the agent to start a new handoff and send you its new link and code.',
  410: 'This link was disabled after too many wrong codes and can never be used again. Ask the agent to start a new handoff.',
};

/** @param {{token: string, onSignedIn: () => Promise<void>}} props */
export function Claim({ token, onSignedIn }) {
  const [summary, setSummary] = useState(/** @type {any} */ (null));
  const [dead, setDead] = useState(/** @type {string | null} */ (null));
  const [code, setCode] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  const path = `/v1/agents/handoff/${encodeURIComponent(token)}`;

  useEffect(() => {
    api('GET', path).then(setSummary, (e) => {
      setDead(e instanceof ApiError && (e.status === 404 || e.status === 410) ? DEAD_LINK[e.status] : e.message);
    });
  }, [path]);

  /** @param {Event} e */
  const submit = (e) => {
    e.preventDefault();
    action.run(async () => {
      try {
        await api('POST', `${path}/claim`, { code: code.trim(), email, password });
      } catch (err) {
        if (err instanceof ApiError && (err.status === 404 || err.status === 410)) {
          setDead(DEAD_LINK[err.status]);
        }
        if (err instanceof ApiError && err.status === 403) {
          const left = /(\d+) attempts? left/.exec(err.message);
          if (left && summary) setSummary({ ...summary, attempts_left: Number(left[1]) });
          throw new ApiError(403, `That code is not the right one. ${left ? `${left[1]} ${left[1] === '1' ? 'attempt' : 'attempts'} left before the link is disabled.` : ''}`.trim(), { code: 'Check the 6 digits the agent gave you.' });
        }
        if (err instanceof ApiError && err.status === 409) throw new ApiError(409, err.message, { email: err.message });
        throw err;
      }
      await api('POST', '/v1/auth/login', { email, password });
      await onSignedIn();
    });
  };

  if (dead) {
    return html`<section class="narrow"><h1>This handoff link cannot be used</h1><${Notice} message=${dead} /></section>`;
  }
  if (!summary) return html`<section class="narrow"><h1>Take over an agent's account</h1><p class="loading">Reading the link…</p></section>`;
  return html`<section class="narrow">
    <h1>Take over an agent's account</h1>
    <p>
      The agent ${summary.agent_name ? html`<strong>${summary.agent_name}</strong> ` : ''}asks you to take over its Redline account.
      Its documents, keys and usage become yours; its keys keep working.
    </p>
    <p class="meta">This link works until ${formatDate(summary.expires_at)}. ${summary.attempts_left} ${summary.attempts_left === 1 ? 'attempt' : 'attempts'} left.</p>
    <form onSubmit=${submit} noValidate>
      <${Notice} message=${action.error} />
      <${Field} label="6-digit code from the agent" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength=${6} value=${code} onInput=${setCode} error=${action.fields.code} required autofocus />
      <${Field} label="Your e-mail" name="email" type="email" autocomplete="username" value=${email} onInput=${setEmail} error=${action.fields.email} required />
      <${Field} label="Choose a password" name="password" type="password" autocomplete="new-password" hint="At least 8 characters." value=${password} onInput=${setPassword} error=${action.fields.password} required />
      <button type="submit" class="primary" disabled=${action.busy}>${action.busy ? 'Taking over…' : 'Take over the account'}</button>
    </form>
  </section>`;
}
