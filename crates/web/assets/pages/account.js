// @ts-check
// Sign in and sign up. The session is the HttpOnly cookie the login answer sets; the token in
// the answer's body is not kept.
import { useState } from 'preact/hooks';
import { html } from '../lib/html.js';
import { api, ApiError } from '../lib/api.js';
import { Link } from '../lib/router.js';
import { Field, Notice, useAction } from '../lib/ui.js';

const PASSWORD_HINT = 'At least 8 characters.';

/** @param {{onSignedIn: () => Promise<void>}} props */
export function SignIn({ onSignedIn }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  /** @param {Event} e */
  const submit = (e) => {
    e.preventDefault();
    action.run(async () => {
      await api('POST', '/v1/auth/login', { email, password });
      await onSignedIn();
    });
  };
  return html`<section class="narrow">
    <h1>Sign in to Redline</h1>
    <form onSubmit=${submit} noValidate>
      <${Notice} message=${action.error} />
      <${Field} label="E-mail" name="email" type="email" autocomplete="username" value=${email} onInput=${setEmail} error=${action.fields.email} required autofocus />
      <${Field} label="Password" name="password" type="password" autocomplete="current-password" value=${password} onInput=${setPassword} error=${action.fields.password} required />
      <button type="submit" class="primary" disabled=${action.busy}>${action.busy ? 'Signing in…' : 'Sign in'}</button>
    </form>
    <p>New to Redline? <${Link} href="/signup">Create an account<//>.</p>
  </section>`;
}

/** @param {{onSignedIn: () => Promise<void>}} props */
export function SignUp({ onSignedIn }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  /** @param {Event} e */
  const submit = (e) => {
    e.preventDefault();
    action.run(async () => {
      try {
        await api('POST', '/v1/auth/signup', { email, password });
      } catch (e) {
        // A taken address is a problem of the e-mail field.
        if (e instanceof ApiError && e.status === 409) throw new ApiError(409, e.message, { email: e.message });
        throw e;
      }
      await api('POST', '/v1/auth/login', { email, password });
      await onSignedIn();
    });
  };
  return html`<section class="narrow">
    <h1>Create your Redline account</h1>
    <p>The free plan includes 500 operations a month.</p>
    <form onSubmit=${submit} noValidate>
      <${Notice} message=${action.error} />
      <${Field} label="E-mail" name="email" type="email" autocomplete="username" value=${email} onInput=${setEmail} error=${action.fields.email} required autofocus />
      <${Field} label="Password" name="password" type="password" autocomplete="new-password" hint=${PASSWORD_HINT} value=${password} onInput=${setPassword} error=${action.fields.password} required />
      <button type="submit" class="primary" disabled=${action.busy}>${action.busy ? 'Creating the account…' : 'Create account'}</button>
    </form>
    <p>Already have an account? <${Link} href="/signin">Sign in<//>.</p>
  </section>`;
}
