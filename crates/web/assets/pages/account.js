// @ts-check
// Sign in, sign up, and a forgotten password. The session is the HttpOnly cookie the login
// answer sets; the token in the answer's body is not kept.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../lib/html.js';
import { api, ApiError } from '../lib/api.js';
import { Link } from '../lib/router.js';
import { Field, Notice, useAction } from '../lib/ui.js';

export const PASSWORD_HINT = 'At least 8 characters. Common passwords and ones made from your e-mail address are refused.';

/**
 * The e-mail and password form of signing in and signing up: one state, one submit.
 * @param {{submit: (email: string, password: string) => Promise<void>, newPassword: boolean, label: string, busyLabel: string}} props
 */
function CredentialsForm({ submit, newPassword, label, busyLabel }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  /** @param {Event} e */
  const onSubmit = (e) => {
    e.preventDefault();
    action.run(() => submit(email, password));
  };
  return html`<form onSubmit=${onSubmit} noValidate>
      <${Notice} message=${action.error} />
      <${Field} label="E-mail" name="email" type="email" autocomplete="username" value=${email} onInput=${setEmail} error=${action.fields.email} required autofocus />
      <${Field} label="Password" name="password" type="password" autocomplete=${newPassword ? 'new-password' : 'current-password'} hint=${newPassword ? PASSWORD_HINT : undefined} value=${password} onInput=${setPassword} error=${action.fields.password} required />
      <button type="submit" class="primary" disabled=${action.busy}>${action.busy ? busyLabel : label}</button>
    </form>`;
}

/** @param {{onSignedIn: () => Promise<void>}} props */
export function SignIn({ onSignedIn }) {
  /** @type {(email: string, password: string) => Promise<void>} */
  const submit = async (email, password) => {
    await api('POST', '/v1/auth/login', { email, password });
    await onSignedIn();
  };
  return html`<section class="narrow">
    <h1>Sign in to Redline</h1>
    <p class="intro">Redline keeps your documents and lets an AI edit them in chat. You see each change it proposes as a redline, accept or reject it, and export to Word, PDF, HTML, Markdown or text.</p>
    <${CredentialsForm} submit=${submit} newPassword=${false} label="Sign in" busyLabel="Signing in…" />
    <p><${Link} href="/forgot-password">Forgot your password?<//></p>
    <p>New to Redline? <${Link} href="/signup">Create an account<//>.</p>
  </section>`;
}

/** @param {{onSignedIn: () => Promise<void>}} props */
export function SignUp({ onSignedIn }) {
  /** @type {(email: string, password: string) => Promise<void>} */
  const submit = async (email, password) => {
    try {
      await api('POST', '/v1/auth/signup', { email, password });
    } catch (e) {
      // A taken address is a problem of the e-mail field.
      if (e instanceof ApiError && e.status === 409) throw new ApiError(409, e.message, { email: e.message });
      throw e;
    }
    await api('POST', '/v1/auth/login', { email, password });
    await onSignedIn();
  };
  return html`<section class="narrow">
    <h1>Create your Redline account</h1>
    <p>The free plan includes 500 operations a month.</p>
    <${CredentialsForm} submit=${submit} newPassword=${true} label="Create account" busyLabel="Creating the account…" />
    <p>Already have an account? <${Link} href="/signin">Sign in<//>.</p>
  </section>`;
}

export function ForgotPassword() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(/** @type {string | null} */ (null));
  const action = useAction();
  /** @param {Event} e */
  const submit = (e) => {
    e.preventDefault();
    action.run(async () => {
      const body = await api('POST', '/v1/auth/password-reset', { email });
      setSent(body.detail);
    });
  };
  return html`<section class="narrow">
    <h1>Reset your password</h1>
    ${sent
      ? html`<p role="status">${sent} Check your mailbox, and its spam folder.</p>`
      : html`<p>Enter the address of your account: Redline mails it a link to choose a new password.</p>
        <form onSubmit=${submit} noValidate>
          <${Notice} message=${action.error} />
          <${Field} label="E-mail" name="email" type="email" autocomplete="username" value=${email} onInput=${setEmail} error=${action.fields.email} required autofocus />
          <button type="submit" class="primary" disabled=${action.busy}>${action.busy ? 'Sending…' : 'Mail me a link'}</button>
        </form>`}
    <p><${Link} href="/signin">Back to sign in<//>.</p>
  </section>`;
}

/** The page of the mailed link: `/reset-password#token=pr_…` (the token stays in the fragment). */
export function ResetPassword() {
  // Read once: the address bar loses the token when it is used.
  const [token] = useState(() => new URLSearchParams(location.hash.slice(1)).get('token') || '');
  const [password, setPassword] = useState('');
  const [done, setDone] = useState(false);
  const action = useAction();
  /** @param {Event} e */
  const submit = (e) => {
    e.preventDefault();
    action.run(async () => {
      await api('POST', '/v1/auth/password-reset/confirm', { token, password });
      history.replaceState(null, '', location.pathname);
      setDone(true);
    });
  };
  if (!token) {
    return html`<section class="narrow">
      <h1>Choose a new password</h1>
      <${Notice} message="This page needs the link from the password-reset mail, opened whole. Ask for a new mail if the link was cut." />
      <p><${Link} href="/forgot-password">Ask for a new link<//>.</p>
    </section>`;
  }
  return html`<section class="narrow">
    <h1>Choose a new password</h1>
    ${done
      ? html`<p role="status">Your password is changed, and every session of your account was signed out. Sign in with the new password.</p>
        <p><${Link} href="/signin">Sign in<//>.</p>`
      : html`<form onSubmit=${submit} noValidate>
          <${Notice} message=${action.error} />
          <${Field} label="New password" name="password" type="password" autocomplete="new-password" hint=${PASSWORD_HINT} value=${password} onInput=${setPassword} error=${action.fields.password} required autofocus />
          <button type="submit" class="primary" disabled=${action.busy}>${action.busy ? 'Saving…' : 'Set the new password'}</button>
        </form>
        <p><${Link} href="/forgot-password">Ask for a new link<//> if this one has expired.</p>`}
  </section>`;
}

/**
 * The page of the mailed verification link: it proves the address at once (the token is in
 * the fragment, which the server never sees, so a mail scanner's fetch proves nothing).
 * @param {{onVerified: () => Promise<void>}} props
 */
export function VerifyEmail({ onVerified }) {
  // Read once: the address bar loses the token when it is used.
  const [token] = useState(() => new URLSearchParams(location.hash.slice(1)).get('token') || '');
  const [verified, setVerified] = useState(/** @type {string | null} */ (null));
  const action = useAction();
  useEffect(() => {
    if (!token) return;
    action.run(async () => {
      const body = await api('POST', '/v1/auth/verify-email', { token });
      history.replaceState(null, '', location.pathname);
      setVerified(body.email);
      await onVerified();
    });
  }, []);
  return html`<section class="narrow">
    <h1>Verify your e-mail address</h1>
    ${!token
      ? html`<${Notice} message="This page needs the link from the verification mail, opened whole. Ask for a new mail in Security if the link was cut." />`
      : verified
        ? html`<p role="status">${verified} is verified. Exports can now be mailed to it.</p>`
        : action.error
          ? html`<${Notice} message=${action.error} />`
          : html`<p role="status">Checking the link…</p>`}
    <p><${Link} href="/documents">Go to your documents<//>.</p>
  </section>`;
}

/**
 * Shown to a signed-in user whose address is not proven yet: exports are not mailed to it.
 * @param {{email: string}} props
 */
export function VerifyBanner({ email }) {
  const [sent, setSent] = useState(/** @type {string | null} */ (null));
  const action = useAction();
  const resend = () => action.run(async () => setSent((await api('POST', '/v1/users/me/email-verification')).detail));
  return html`<div class="banner" role="region" aria-label="E-mail verification">
    ${sent
      ? html`<span role="status">${sent}</span>`
      : html`<span>Your e-mail address ${email} is not verified yet, so exports are not mailed to it. Open the link in the mail Redline sent you.</span>
        <button type="button" onClick=${resend} disabled=${action.busy}>${action.busy ? 'Sending…' : 'Mail me a new link'}</button>`}
    <${Notice} message=${action.error} />
  </div>`;
}
