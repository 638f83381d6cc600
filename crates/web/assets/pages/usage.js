// @ts-check
// This month's operations of the account the app acts for, its promotions, and redeeming a code.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../lib/html.js';
import { api, formatDate } from '../lib/api.js';
import { Field, Notice, useAction } from '../lib/ui.js';

/** @param {{me: any, org: string | null}} props */
export function Usage({ me, org }) {
  const [usage, setUsage] = useState(/** @type {any} */ (null));
  const [code, setCode] = useState('');
  const [redeemed, setRedeemed] = useState(/** @type {string | null} */ (null));
  const load = useAction();
  const redeem = useAction();
  const refresh = () => load.run(async () => setUsage(await api('GET', '/v1/usage')));
  useEffect(() => {
    refresh();
  }, []);

  /** @param {Event} e */
  const submit = (e) => {
    e.preventDefault();
    setRedeemed(null);
    redeem.run(async () => {
      const body = await api('POST', '/v1/users/me/promotions/redeem', { code: code.trim() });
      setCode('');
      const granted = body && typeof body.ops_granted === 'number' ? `${body.ops_granted} operations added` : 'Code redeemed';
      setRedeemed(`${granted}${body && body.name ? ` (${body.name})` : ''}.`);
      await refresh();
    });
  };

  const orgName = org && me.organizations.find((/** @type {any} */ o) => o.org_id === org)?.name;
  const unlimited = usage && usage.monthly_limit < 0;
  const fraction = usage && !unlimited && usage.monthly_limit > 0 ? Math.min(1, usage.monthly_used / usage.monthly_limit) : 0;
  return html`<section>
    <h1>Usage</h1>
    <p>Operations of ${orgName ? html`the organization <strong>${orgName}</strong>` : 'your account'} this month. Reading, uploading and exporting are free; each chat turn counts one operation, a question as much as an edit, and an edit of many sections one per 25 sections it changes.</p>
    <${Notice} message=${load.error} />
    ${usage && html`<div class="meter-card">
      <p class="big">${unlimited ? html`${usage.monthly_used} operations used (no monthly limit)` : html`${usage.monthly_used} of ${usage.monthly_limit} operations used`}</p>
      ${!unlimited && html`<meter min="0" max=${usage.monthly_limit} low=${usage.monthly_limit * 0.75} high=${usage.monthly_limit * 0.9} optimum="0" value=${usage.monthly_used} aria-label="Operations used this month">${Math.round(fraction * 100)}%</meter>`}
      <dl class="facts">
        <dt>Plan</dt><dd>${usage.subscription_tier}</dd>
        <dt>Left this month</dt><dd>${unlimited ? 'No limit' : usage.monthly_remaining}</dd>
        <dt>Count starts again</dt><dd>${formatDate(usage.resets_at)}</dd>
        ${usage.attachment_storage && html`<dt>Attachment files</dt><dd>${megabytes(usage.attachment_storage.used_bytes)} of ${usage.attachment_storage.limit_bytes < 0 ? 'unlimited storage' : megabytes(usage.attachment_storage.limit_bytes)}</dd>`}
      </dl>
      ${usage.quota_exhausted && html`<p class="notice notice-error" role="alert">This month's operations are used up: requests that cost an operation are refused until ${formatDate(usage.resets_at)}. A promotion code adds operations now.</p>`}
      <h2>Promotions</h2>
      ${usage.promotions.length === 0 ? html`<p>No active promotion.</p>` : html`<ul class="cards">
        ${usage.promotions.map((/** @type {any} */ p) => html`<li key=${p.redemption_id}><strong>${p.name}</strong> <span class="meta">${p.ops_remaining} of ${p.ops_granted} operations left${p.expires_at ? ` · until ${formatDate(p.expires_at)}` : ''}</span></li>`)}
      </ul>`}
    </div>`}
    <form class="inline" onSubmit=${submit} noValidate>
      <h2>Redeem a promotion code</h2>
      <p class="hint">Codes add operations to your own account${orgName ? ', not to the organization' : ''}.</p>
      <${Notice} message=${redeem.error} />
      <${Notice} message=${redeemed} kind="success" />
      <${Field} label="Promotion code" name="code" value=${code} onInput=${setCode} error=${redeem.fields.code} autocomplete="off" required />
      <button type="submit" class="primary" disabled=${redeem.busy || !code.trim()}>${redeem.busy ? 'Redeeming…' : 'Redeem'}</button>
    </form>
  </section>`;
}

/** @param {number} bytes */
function megabytes(bytes) {
  const mb = bytes / (1024 * 1024);
  return `${mb < 10 ? mb.toFixed(1) : Math.round(mb)} MB`;
}
