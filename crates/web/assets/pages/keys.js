// @ts-check
// API keys: the list, a new key shown once, and revocation. Used for the user's keys and, with
// another path, an organization's.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../lib/html.js';
import { api, formatDate } from '../lib/api.js';
import { ConfirmButton, Field, Notice, useAction } from '../lib/ui.js';

/** What a key may do, as offered when making one (docs/api.md, "Key scopes, expiry and last use"). */
const ACCESS = {
  full: { label: 'Everything (read, edit, hand over the account)', scopes: ['read', 'edit', 'admin'] },
  edit: { label: 'Read and edit documents', scopes: ['edit'] },
  read: { label: 'Read only (documents, jobs, exports)', scopes: ['read'] },
};

/** @param {string[] | undefined} scopes */
function accessOf(scopes) {
  const held = new Set(scopes || []);
  if (held.has('admin') && held.has('edit')) return 'Everything';
  const words = [];
  if (held.has('edit')) words.push('Read and edit');
  else if (held.has('read')) words.push('Read only');
  if (held.has('admin')) words.push('Hand over the account');
  return words.join(', ') || 'Nothing';
}

export function Keys() {
  return html`<section>
    <h1>API keys</h1>
    <p>Keys let your programs and agents call the Redline API as you. Keep them secret: anyone with a key can use your documents and operations.</p>
    <${KeyManager} path="/v1/users/me/api-keys" owner="your account" />
  </section>`;
}

/**
 * @param {{path: string, owner: string}} props the list's path, and whose keys they are (in words)
 */
export function KeyManager({ path, owner }) {
  const [keys, setKeys] = useState(/** @type {any[] | null} */ (null));
  const [name, setName] = useState('');
  const [access, setAccess] = useState('full');
  const [lifetime, setLifetime] = useState('never');
  const [created, setCreated] = useState(/** @type {any} */ (null));
  const [copied, setCopied] = useState(false);
  const list = useAction();
  const create = useAction();
  const revoke = useAction();

  const load = () =>
    list.run(async () => {
      const body = await api('GET', path);
      setKeys(body.keys);
    });
  useEffect(() => {
    load();
  }, [path]);

  /** @param {Event} e */
  const submit = (e) => {
    e.preventDefault();
    create.run(async () => {
      /** @type {Record<string, any>} */
      const request = { name: name.trim() || 'Unnamed key' };
      if (access !== 'full') request.scopes = ACCESS[access].scopes;
      if (lifetime !== 'never') request.expires_at = new Date(Date.now() + Number(lifetime) * 86_400_000).toISOString();
      const body = await api('POST', path, request);
      setCreated(body);
      setCopied(false);
      setName('');
      await load();
    });
  };

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.api_key);
      setCopied(true);
    } catch {
      create.setError('The browser did not allow copying: select the key and copy it by hand.');
    }
  };

  return html`<div class="keys">
    ${created && html`<div class="created" role="status">
      <h2>Your new key “${created.name}”</h2>
      <p class="warning"><strong>Copy it now:</strong> this is the only time Redline shows it. It is stored hashed and cannot be recovered; if you lose it, revoke it and create another.</p>
      <p><code class="secret" aria-label="The new API key">${created.api_key}</code></p>
      <button type="button" class="primary" onClick=${copy}>${copied ? 'Copied' : 'Copy the key'}</button>
      <button type="button" onClick=${() => setCreated(null)}>I have stored it</button>
    </div>`}
    <form class="inline" onSubmit=${submit} noValidate>
      <h2>Create a key</h2>
      <${Notice} message=${create.error} />
      <${Field} label="Name (what it is for)" name="name" value=${name} maxlength=${200} onInput=${setName} error=${create.fields.name} />
      <div class="field">
        <label for="key-access">What it may do</label>
        <select id="key-access" value=${access} onChange=${(/** @type {any} */ e) => setAccess(e.currentTarget.value)}>
          ${Object.entries(ACCESS).map(([value, a]) => html`<option value=${value}>${a.label}</option>`)}
        </select>
      </div>
      <div class="field">
        <label for="key-lifetime">Expires</label>
        <select id="key-lifetime" value=${lifetime} onChange=${(/** @type {any} */ e) => setLifetime(e.currentTarget.value)}>
          <option value="never">Never</option>
          <option value="7">In 7 days</option>
          <option value="30">In 30 days</option>
          <option value="90">In 90 days</option>
          <option value="365">In a year</option>
        </select>
        ${create.fields.expires_at && html`<p class="field-error">${create.fields.expires_at}</p>`}
      </div>
      <button type="submit" class="primary" disabled=${create.busy}>${create.busy ? 'Creating…' : 'Create key'}</button>
    </form>
    <h2>Keys of ${owner}</h2>
    <${Notice} message=${list.error || revoke.error} />
    ${keys === null ? html`<p class="loading">Loading the keys…</p>` : keys.length === 0 ? html`<p>No keys yet.</p>` : html`
      <table class="list">
        <thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Made by</th><th scope="col">May</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>
          ${keys.map((k) => html`<tr key=${k.key_id}>
            <td data-label="Name">${k.name}</td>
            <td data-label="Key"><code>${k.key_preview}</code></td>
            <td data-label="Created">${formatDate(k.created_at)}</td>
            <td data-label="Made by">${k.created_by ? k.created_by.email || 'An agent' : 'The operator'}</td>
            <td data-label="May">${accessOf(k.scopes)}</td>
            <td data-label="Last used">${k.last_used_at ? formatDate(k.last_used_at) : 'Never'}</td>
            <td data-label="Status">${k.revoked ? `Revoked ${formatDate(k.revoked_at)}` : k.expired ? `Expired ${formatDate(k.expires_at)}` : k.expires_at ? `Active until ${formatDate(k.expires_at)}` : 'Active'}</td>
            <td>${!k.revoked && html`<${ConfirmButton}
              label=${`Revoke ${k.name}`}
              question=${`Revoke “${k.name}”? Programs using it stop working at once; this cannot be undone.`}
              confirmLabel="Revoke for ever"
              busy=${revoke.busy}
              onConfirm=${() => revoke.run(async () => { await api('DELETE', `${path}/${k.key_id}`); await load(); })}
            />`}</td>
          </tr>`)}
        </tbody>
      </table>`}
  </div>`;
}
