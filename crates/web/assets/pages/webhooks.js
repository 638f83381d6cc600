// @ts-check
// Webhooks: where Redline tells a program what happened (docs/api.md, "Webhooks"). The list of
// endpoints, one made with its signing secret shown once, rotation, disabling, deleting, and
// each endpoint's delivery log with "Send again". For the account, or for the organization
// acted for (its owners and admins only: the API says so in words to a member).
import { useEffect, useState } from 'preact/hooks';
import { html } from '../lib/html.js';
import { api, formatDate } from '../lib/api.js';
import { ConfirmButton, Field, Notice, useAction } from '../lib/ui.js';

/** The events an endpoint may receive, as the API names them, with what each means. */
export const EVENTS = [
  ['job.awaiting_approval', 'A chat turn waits for someone to review its changes'],
  ['job.completed', 'A chat turn finished'],
  ['job.failed', 'A chat turn failed'],
  ['job.cancelled', 'A chat turn was cancelled'],
  ['attachment.processed', 'An attachment is ready to be searched'],
  ['attachment.failed', 'An attachment could not be read'],
  ['usage.threshold', 'The month’s operations reached 80 % or 100 % of the plan'],
];

/** What a delivery's status means, in words. */
const DELIVERY = { pending: 'Waiting to be sent', delivered: 'Delivered', failed: 'Given up' };

/** @param {{owner: string}} props whose endpoints they are, in words */
export function Webhooks({ owner }) {
  const [endpoints, setEndpoints] = useState(/** @type {any[] | null} */ (null));
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState(/** @type {string[]} */ (['job.completed', 'job.failed']));
  const [secret, setSecret] = useState(/** @type {{url: string, secret: string, rotated: boolean} | null} */ (null));
  const [open, setOpen] = useState(/** @type {string | null} */ (null));
  const list = useAction();
  const create = useAction();
  const change = useAction();

  const load = () => list.run(async () => setEndpoints((await api('GET', '/v1/webhooks')).endpoints));
  useEffect(() => {
    load();
  }, []);

  /** @param {Event} e */
  const submit = (e) => {
    e.preventDefault();
    create.run(async () => {
      const made = await api('POST', '/v1/webhooks', { url: url.trim(), events, description: description.trim() });
      setSecret({ url: made.url, secret: made.secret, rotated: false });
      setUrl('');
      setDescription('');
      await load();
    });
  };
  /** @param {string} event */
  const toggle = (event) => setEvents(events.includes(event) ? events.filter((e) => e !== event) : [...events, event]);
  /** @param {string} method @param {string} path @param {any} [body] */
  const act = (method, path, body) =>
    change.run(async () => {
      const answer = await api(method, path, body);
      if (answer && answer.secret) setSecret({ url: answer.url, secret: answer.secret, rotated: true });
      await load();
    });

  return html`<section>
    <h1>Webhooks</h1>
    <p>Redline sends a signed message to your program when something happens to ${owner}, so it need not keep asking. Messages follow the Standard Webhooks specification: its libraries check the signature with the endpoint’s secret.</p>
    ${secret && html`<div class="created" role="status">
      <h2>${secret.rotated ? 'The new signing secret' : 'The signing secret'} of ${secret.url}</h2>
      <p class="warning"><strong>Copy it now:</strong> this is the only time Redline shows it.${secret.rotated ? ' The secret before it keeps signing for 24 hours, so your program can switch without missing a message.' : ''}</p>
      <p><code class="secret" aria-label="The signing secret">${secret.secret}</code></p>
      <button type="button" onClick=${() => setSecret(null)}>I have stored it</button>
    </div>`}
    <form class="inline" onSubmit=${submit} noValidate>
      <h2>Add an endpoint</h2>
      <${Notice} message=${create.error} />
      <${Field} label="URL that receives the messages" name="url" type="url" value=${url} maxlength=${2048} onInput=${setUrl} error=${create.fields.url} hint="An https:// address of your program." />
      <fieldset class="field">
        <legend>Events it receives</legend>
        ${EVENTS.map(([name, label]) => html`<label class="check"><input type="checkbox" checked=${events.includes(name)} onChange=${() => toggle(name)} /> ${label} <code>${name}</code></label>`)}
        ${create.fields.events && html`<p class="field-error">${create.fields.events}</p>`}
      </fieldset>
      <${Field} label="Description (optional)" name="description" value=${description} maxlength=${200} onInput=${setDescription} error=${create.fields.description} />
      <button type="submit" class="primary" disabled=${create.busy}>${create.busy ? 'Adding…' : 'Add endpoint'}</button>
    </form>
    <h2>Endpoints</h2>
    <${Notice} message=${list.error || change.error} />
    ${endpoints === null ? !list.error && html`<p class="loading">Loading the endpoints…</p>` : endpoints.length === 0 ? html`<p>No endpoints yet.</p>` : html`
      <ul class="cards endpoints">
        ${endpoints.map((ep) => html`<li key=${ep.id}>
          <h3><code>${ep.url}</code></h3>
          ${ep.description && html`<p>${ep.description}</p>`}
          <p>${ep.enabled ? (ep.failing_since ? `Failing since ${formatDate(ep.failing_since)}: Redline keeps trying for 3 days.` : 'Active') : `Disabled: ${ep.disabled_reason || 'by its owner'}`}</p>
          <p>Receives: ${ep.events.map((/** @type {string} */ e) => html`<code>${e}</code> `)}</p>
          <div class="actions">
            <button type="button" aria-expanded=${open === ep.id ? 'true' : 'false'} onClick=${() => setOpen(open === ep.id ? null : ep.id)}>${open === ep.id ? 'Hide deliveries' : 'Deliveries'}</button>
            <button type="button" disabled=${change.busy} onClick=${() => act('PATCH', `/v1/webhooks/${ep.id}`, { enabled: !ep.enabled })}>${ep.enabled ? 'Disable' : 'Enable'}</button>
            <button type="button" disabled=${change.busy} onClick=${() => act('POST', `/v1/webhooks/${ep.id}/rotate-secret`)}>New secret</button>
            <${ConfirmButton} label=${`Delete ${ep.url}`} question=${`Delete the endpoint ${ep.url} and its delivery log? Messages still owed to it are dropped.`}
              confirmLabel="Delete" busy=${change.busy} onConfirm=${() => act('DELETE', `/v1/webhooks/${ep.id}`)} />
          </div>
          ${open === ep.id && html`<${DeliveryLog} endpointId=${ep.id} />`}
        </li>`)}
      </ul>`}
  </section>`;
}

/** @param {{endpointId: string}} props */
function DeliveryLog({ endpointId }) {
  const [deliveries, setDeliveries] = useState(/** @type {any[] | null} */ (null));
  const [next, setNext] = useState(/** @type {string | null} */ (null));
  const load = useAction();
  const resend = useAction();
  const path = `/v1/webhooks/${endpointId}/deliveries`;
  /** @param {string | null} cursor */
  const read = (cursor) =>
    load.run(async () => {
      const page = await api('GET', `${path}?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      setDeliveries((before) => (cursor && before ? [...before, ...page.deliveries] : page.deliveries));
      setNext(page.next_cursor);
    });
  useEffect(() => {
    read(null);
  }, [endpointId]);

  return html`<div class="deliveries">
    <${Notice} message=${load.error || resend.error} />
    ${deliveries === null ? !load.error && html`<p class="loading">Loading the deliveries…</p>` : deliveries.length === 0 ? html`<p>Nothing sent yet.</p>` : html`
      <table class="list">
        <caption class="visually-hidden">Deliveries, newest first</caption>
        <thead><tr><th scope="col">Event</th><th scope="col">Made</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>
          ${deliveries.map((d) => html`<tr key=${d.id}>
            <td data-label="Event"><code>${d.event}</code></td>
            <td data-label="Made">${formatDate(d.created_at)}</td>
            <td data-label="Status">${DELIVERY[/** @type {'pending' | 'delivered' | 'failed'} */ (d.status)] || d.status}${d.status === 'pending' && d.next_attempt_at ? `, next try ${formatDate(d.next_attempt_at)}` : ''}</td>
            <td data-label="Attempts">${d.attempts}</td>
            <td data-label="Last answer">${d.last_status_code ? `HTTP ${d.last_status_code}` : d.last_error || '—'}</td>
            <td><button type="button" disabled=${resend.busy} onClick=${() => resend.run(async () => { await api('POST', `${path}/${d.id}/resend`); await read(null); })}>Send again</button></td>
          </tr>`)}
        </tbody>
      </table>
      ${next && html`<button type="button" disabled=${load.busy} onClick=${() => read(next)}>Show older deliveries</button>`}`}
  </div>`;
}
