// @ts-check
// The page of a mailed invitation: `/invitations#token=it_…` (the token stays in the
// fragment). It says which organization invites, with which role and who invited, and lets the
// person signed in with the invited address accept or decline.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../lib/html.js';
import { api, setActingFor } from '../lib/api.js';
import { Link } from '../lib/router.js';
import { Notice, useAction } from '../lib/ui.js';

/** @param {{me: any, onChanged: () => Promise<void>}} props */
export function Invitation({ me, onChanged }) {
  // Read once: the address bar loses the token when it is used.
  const [token] = useState(() => new URLSearchParams(location.hash.slice(1)).get('token') || '');
  const [offer, setOffer] = useState(/** @type {any} */ (null));
  const [outcome, setOutcome] = useState(/** @type {string | null} */ (null));
  const load = useAction();
  const answer = useAction();
  useEffect(() => {
    if (token) load.run(async () => setOffer(await api('POST', '/v1/users/me/invitations/lookup', { token })));
  }, [token]);

  const accept = () =>
    answer.run(async () => {
      const joined = await api('POST', '/v1/users/me/invitations/accept', { token });
      history.replaceState(null, '', location.pathname);
      await onChanged();
      setActingFor(joined.org_id);
      setOutcome(`You are now a member of ${offer.org_name}. Choose it under “Acting for” to work for it.`);
    });
  const decline = () =>
    answer.run(async () => {
      await api('POST', '/v1/users/me/invitations/decline', { token });
      history.replaceState(null, '', location.pathname);
      setOutcome('Invitation declined. Nothing changed for your account.');
    });

  if (!token) {
    return html`<section class="narrow"><h1>Invitation</h1>
      <${Notice} message="This page needs the link from the invitation mail, opened whole." />
    </section>`;
  }
  return html`<section class="narrow">
    <h1>Invitation</h1>
    <${Notice} message=${load.error || answer.error} />
    ${load.error && html`<p>You are signed in as ${me.email}. <${Link} href="/documents">Go to your documents<//>.</p>`}
    ${outcome
      ? html`<p role="status">${outcome}</p><p><${Link} href="/settings/organizations">Your organizations<//></p>`
      : offer && html`<p>${offer.invited_by || 'A member'} invites you to join <strong>${offer.org_name}</strong> as ${offer.role === 'admin' ? 'an admin (you will also manage its members and keys)' : 'a member (you will use its documents)'}.</p>
        <div class="actions">
          <button type="button" class="primary" disabled=${answer.busy} onClick=${accept}>Join ${offer.org_name}</button>
          <button type="button" disabled=${answer.busy} onClick=${decline}>Decline</button>
        </div>`}
  </section>`;
}
