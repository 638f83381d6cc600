// @ts-check
// Organizations: the list, a new one, and one organization's members and keys.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../lib/html.js';
import { api, actingFor, formatDate, setActingFor } from '../lib/api.js';
import { Link, navigate } from '../lib/router.js';
import { ConfirmButton, Field, Notice, useAction } from '../lib/ui.js';
import { KeyManager } from './keys.js';

/** @param {{me: any, onChanged: () => Promise<void>}} props */
export function Organizations({ me, onChanged }) {
  const [orgs, setOrgs] = useState(/** @type {any[] | null} */ (null));
  const [name, setName] = useState('');
  const list = useAction();
  const create = useAction();
  const load = () => list.run(async () => setOrgs((await api('GET', '/v1/users/me/organizations')).organizations));
  useEffect(() => {
    load();
  }, []);

  /** @param {Event} e */
  const submit = (e) => {
    e.preventDefault();
    create.run(async () => {
      const org = await api('POST', '/v1/users/me/organizations', { name: name.trim() });
      setName('');
      await onChanged();
      navigate(`/settings/organizations/${org.org_id}`);
    });
  };

  const roles = Object.fromEntries(me.organizations.map((/** @type {any} */ o) => [o.org_id, o.role]));
  return html`<section>
    <h1>Organizations</h1>
    <p>An organization shares documents, keys and a plan between its members. Choose it under “Acting for” to work for it.</p>
    <${Notice} message=${list.error} />
    ${orgs === null ? html`<p class="loading">Loading…</p>` : orgs.length === 0 ? html`<p>You are not a member of any organization yet.</p>` : html`
      <ul class="cards">
        ${orgs.map((o) => html`<li key=${o.org_id}>
          <${Link} href=${`/settings/organizations/${o.org_id}`}>${o.name}<//>
          <span class="meta">Your role: ${roles[o.org_id] || 'member'} · plan ${o.subscription_tier} · created ${formatDate(o.created_at)}</span>
        </li>`)}
      </ul>`}
    <form class="inline" onSubmit=${submit} noValidate>
      <h2>Create an organization</h2>
      <${Notice} message=${create.error} />
      <${Field} label="Name" name="name" value=${name} maxlength=${200} onInput=${setName} error=${create.fields.name} required />
      <button type="submit" class="primary" disabled=${create.busy}>${create.busy ? 'Creating…' : 'Create organization'}</button>
    </form>
  </section>`;
}

/** @param {{me: any, orgId: string, onChanged: () => Promise<void>}} props */
export function Organization({ me, orgId, onChanged }) {
  const [org, setOrg] = useState(/** @type {any} */ (null));
  const [members, setMembers] = useState(/** @type {any[] | null} */ (null));
  const [invitations, setInvitations] = useState(/** @type {any[]} */ ([]));
  const [invited, setInvited] = useState(/** @type {string | null} */ (null));
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('member');
  const load = useAction();
  const add = useAction();
  const remove = useAction();
  const base = `/v1/users/me/organizations/${encodeURIComponent(orgId)}`;

  const refresh = () =>
    load.run(async () => {
      setOrg(await api('GET', base));
      setMembers((await api('GET', `${base}/members`)).members);
      if (manages) setInvitations((await api('GET', `${base}/invitations`)).invitations);
    });
  useEffect(() => {
    refresh();
  }, [orgId]);

  const mine = me.organizations.find((/** @type {any} */ o) => o.org_id === orgId);
  const manages = mine && (mine.role === 'owner' || mine.role === 'admin');

  /** @param {Event} e */
  const submit = (e) => {
    e.preventDefault();
    setInvited(null);
    add.run(async () => {
      const body = await api('POST', `${base}/members`, { email: email.trim(), role });
      setEmail('');
      setInvited(`An invitation was mailed to ${body.email}. They become a member when they accept it (within 7 days).`);
      await refresh();
    });
  };

  /** @param {string} id */
  const withdraw = (id) =>
    remove.run(async () => {
      await api('DELETE', `${base}/invitations/${encodeURIComponent(id)}`);
      await refresh();
    });

  /** @param {string} userId */
  const removeMember = (userId) =>
    remove.run(async () => {
      await api('DELETE', `${base}/members/${encodeURIComponent(userId)}`);
      if (userId === me.user_id) {
        if (actingFor() === orgId) setActingFor(null);
        await onChanged();
        navigate('/settings/organizations');
      } else {
        await refresh();
      }
    });

  if (load.error && !org) {
    return html`<section><h1>Organization</h1><${Notice} message=${load.error} /><p><${Link} href="/settings/organizations">Back to organizations<//></p></section>`;
  }
  if (!org) return html`<section><h1>Organization</h1><p class="loading">Loading…</p></section>`;
  return html`<section>
    <p><${Link} href="/settings/organizations">← Organizations<//></p>
    <h1>${org.name}</h1>
    <p class="meta">Plan ${org.subscription_tier} · created ${formatDate(org.created_at)} · your role: ${mine ? mine.role : 'member'}</p>
    <h2>Members</h2>
    <${Notice} message=${remove.error} />
    ${members && html`<table class="list">
      <thead><tr><th scope="col">Member</th><th scope="col">Role</th><th scope="col">Since</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>${members.map((m) => html`<tr key=${m.user_id}>
        <td data-label="Member">${m.email || m.user_id}${m.user_id === me.user_id ? ' (you)' : ''}</td>
        <td data-label="Role">${m.role}</td>
        <td data-label="Since">${formatDate(m.created_at)}</td>
        <td>${m.role !== 'owner' && (m.user_id === me.user_id
          ? html`<${ConfirmButton} label="Leave" question="Leave this organization? You lose access to its documents at once, and the organization keys you made are revoked." confirmLabel="Leave" onConfirm=${() => removeMember(m.user_id)} />`
          : manages && html`<${ConfirmButton} label=${`Remove ${m.email || 'member'}`} question="Remove this member? Their access ends at once, and the organization keys they made are revoked." confirmLabel="Remove" onConfirm=${() => removeMember(m.user_id)} />`)}</td>
      </tr>`)}</tbody>
    </table>`}
    ${manages && invitations.length > 0 && html`<h3>Invitations not yet accepted</h3>
      <ul class="cards">${invitations.map((i) => html`<li key=${i.invitation_id}><strong>${i.email}</strong> <span class="meta">${i.role} · until ${formatDate(i.expires_at)}</span>
        <${ConfirmButton} label=${`Withdraw the invitation of ${i.email}`} question="Withdraw this invitation? Its link stops working." confirmLabel="Withdraw" onConfirm=${() => withdraw(i.invitation_id)} /></li>`)}</ul>`}
    ${manages && html`<form class="inline" onSubmit=${submit} noValidate>
      <h3>Invite a member</h3>
      <p class="hint">Redline mails them a link; they join when they accept it, signed in with that address.</p>
      <${Notice} message=${add.error} />
      <${Notice} message=${invited} kind="success" />
      <${Field} label="Their e-mail" name="email" type="email" value=${email} onInput=${setEmail} error=${add.fields.email} required />
      <div class="field">
        <label for="member-role">Role</label>
        <select id="member-role" value=${role} onChange=${(/** @type {any} */ e) => setRole(e.currentTarget.value)}>
          <option value="member">Member: uses its documents</option>
          <option value="admin">Admin: also manages members and keys</option>
        </select>
      </div>
      <button type="submit" class="primary" disabled=${add.busy}>${add.busy ? 'Inviting…' : 'Invite'}</button>
    </form>`}
    ${manages
      ? html`<h2>Organization keys</h2><p>Keys of the organization act for it, whoever created them.</p><${KeyManager} path=${`${base}/api-keys`} owner=${org.name} />`
      : html`<p class="hint">Only the organization's owner and admins manage its keys.</p>`}
  </section>`;
}
