// @ts-check
// The app's one way to the API. It calls the same public /v1 endpoints an integrator calls,
// signed in by the HttpOnly session cookie (`__Host-redline_session` on https) (the browser sends it; this code never
// sees or keeps a token). A failure becomes an ApiError whose message is a sentence a person
// understands, with the field errors of a 422 by field name.

const ORG_KEY = 'redline.organization';

/** The organization the app acts for, or null for the signed-in user. Not a secret: an id. */
export function actingFor() {
  return sessionStorage.getItem(ORG_KEY);
}

/** @param {string | null} orgId */
export function setActingFor(orgId) {
  if (orgId) sessionStorage.setItem(ORG_KEY, orgId);
  else sessionStorage.removeItem(ORG_KEY);
}

export class ApiError extends Error {
  /**
   * @param {number} status HTTP status (0: the service could not be reached)
   * @param {string} message a sentence for a person
   * @param {Record<string, string>} fields field name -> problem, for a 422
   */
  constructor(status, message, fields = {}) {
    super(message);
    this.status = status;
    this.fields = fields;
  }
}

/** Paths that act for the user whatever organization is chosen. */
function personal(path) {
  return path.startsWith('/v1/users/') || path.startsWith('/v1/auth/') || path.startsWith('/v1/agents/');
}

/** @param {string} path */
function headersFor(path) {
  /** @type {Record<string, string>} */
  const headers = { Accept: 'application/json' };
  const org = actingFor();
  if (org && !personal(path)) headers['Redline-Organization'] = org;
  return headers;
}

/**
 * @param {string} method
 * @param {string} path
 * @param {unknown} [json] a body sent as JSON (a Blob is sent as its bytes)
 * @returns {Promise<any>} the JSON answer (null for 204)
 */
export async function api(method, path, json) {
  const { body } = await apiWithHeaders(method, path, json);
  return body;
}

/**
 * Like `api`, with the answer's headers (for `Link`).
 * @param {string} method
 * @param {string} path
 * @param {unknown} [json]
 * @returns {Promise<{body: any, headers: Headers}>}
 */
export async function apiWithHeaders(method, path, json) {
  const headers = headersFor(path);
  /** @type {RequestInit} */
  const init = { method, headers, credentials: 'same-origin' };
  if (json instanceof Blob) {
    headers['Content-Type'] = 'application/octet-stream';
    init.body = json;
  } else if (json !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(json);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch {
    throw new ApiError(0, 'Redline could not be reached. Check your connection, then try again.');
  }
  const text = await res.text();
  const body = parse(text);
  if (!res.ok) throw problem(res.status, body, (name) => res.headers.get(name));
  return { body, headers: res.headers };
}

/**
 * A file the API answers (an export): its bytes and the name its `Content-Disposition` gives.
 * @param {string} method
 * @param {string} path
 * @param {unknown} json
 * @returns {Promise<{blob: Blob, filename: string}>}
 */
export async function download(method, path, json) {
  const headers = headersFor(path);
  headers['Content-Type'] = 'application/json';
  headers.Accept = '*/*';
  let res;
  try {
    res = await fetch(path, { method, headers, credentials: 'same-origin', body: JSON.stringify(json) });
  } catch {
    throw new ApiError(0, 'Redline could not be reached. Check your connection, then try again.');
  }
  if (!res.ok) {
    const body = parse(await res.text());
    throw problem(res.status, body, (name) => res.headers.get(name));
  }
  return { blob: await res.blob(), filename: dispositionName(res.headers.get('Content-Disposition') || '') };
}

/**
 * The file name a `Content-Disposition` gives: its `filename*` in full (RFC 6266), else its
 * ASCII `filename`.
 * @param {string} disposition
 */
export function dispositionName(disposition) {
  const full = /filename\*=UTF-8''([^;]+)/i.exec(disposition);
  if (full) {
    try {
      return decodeURIComponent(full[1].trim());
    } catch {
      // A malformed encoding: the ASCII name below.
    }
  }
  const plain = /filename="([^"]+)"|filename=([^;]+)/i.exec(disposition);
  return plain ? (plain[1] || plain[2]).trim() : 'document';
}

/**
 * The `rel="next"` target of a `Link` header, as a path of this origin, or null.
 * @param {Headers} headers
 */
export function nextLink(headers) {
  const link = headers.get('Link');
  const match = link && /<([^>]+)>\s*;\s*rel="?next"?/.exec(link);
  if (!match) return null;
  const url = new URL(match[1], location.href);
  return url.pathname + url.search;
}

/**
 * Sends a multipart form with upload progress (fetch cannot report it).
 * @param {string} path
 * @param {FormData} form
 * @param {(fraction: number) => void} onProgress
 * @returns {Promise<any>}
 */
export function upload(path, form, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path);
    for (const [name, value] of Object.entries(headersFor(path))) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onerror = () => reject(new ApiError(0, 'The upload stopped: Redline could not be reached. Try again.'));
    xhr.onload = () => {
      const body = parse(xhr.responseText);
      if (xhr.status >= 200 && xhr.status < 300) resolve(body);
      else reject(problem(xhr.status, body, (name) => xhr.getResponseHeader(name)));
    };
    xhr.send(form);
  });
}

/** @param {string} text */
function parse(text) {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** @param {string | null | undefined} value */
function seconds(value) {
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? n : null;
}

/**
 * Turns a refused request into a sentence (and field problems). Also tells the app when the
 * session ended (401) or the month's operations ran out (429), wherever it happened.
 * @param {number} status
 * @param {any} body
 * @param {(name: string) => string | null} header
 */
export function problem(status, body, header) {
  const detail = body && typeof body === 'object' ? body.detail : undefined;
  /** @type {Record<string, string>} */
  const fields = {};
  let message = typeof detail === 'string' ? detail : '';
  if (status === 422 && Array.isArray(detail)) {
    for (const item of detail) {
      const name = Array.isArray(item.loc) ? String(item.loc[item.loc.length - 1]) : '';
      if (!fields[name]) fields[name] = fieldMessage(item);
    }
    message = 'Some fields need attention: see the messages next to them.';
  } else if (detail && typeof detail === 'object' && typeof detail.message_user === 'string') {
    message = detail.message_user;
  } else if (body && typeof body === 'object' && typeof body.message_user === 'string') {
    message = body.message_user;
  }
  if (status === 401) {
    window.dispatchEvent(new CustomEvent('redline:unauthorized', { detail: message }));
  }
  if (status === 429) {
    const retry = seconds(header('Retry-After'));
    if (header('X-Usage-Limit') !== null) {
      const limit = header('X-Usage-Limit');
      message = `This account has used all ${limit} operations of this month. They come back on ${resetDay(retry)}; a promotion code on the Usage page adds more now.`;
      window.dispatchEvent(new CustomEvent('redline:quota', { detail: message }));
    } else if (retry) {
      message = `Too many requests for now: try again in ${retry} seconds. ${message}`.trim();
    } else {
      message = 'Redline is busy right now. Wait a few seconds, then try again.';
    }
  }
  if (!message) message = fallback(status);
  return new ApiError(status, message, fields);
}

/** @param {number | null} retryAfterSeconds */
function resetDay(retryAfterSeconds) {
  const when = new Date(Date.now() + (retryAfterSeconds ?? 0) * 1000);
  return when.toLocaleDateString(undefined, { year: 'numeric', month: 'long', day: 'numeric' });
}

/** @param {{type?: string, msg?: string, ctx?: Record<string, unknown>}} item */
function fieldMessage(item) {
  const ctx = item.ctx || {};
  switch (item.type) {
    case 'missing':
      return 'This is required.';
    case 'string_too_short': {
      const n = ctx.min_length ?? /at least (\d+)/.exec(item.msg || '')?.[1];
      return n ? `Use at least ${n} characters.` : sentence(item.msg);
    }
    case 'string_too_long': {
      const n = ctx.max_length ?? /at most (\d+)/.exec(item.msg || '')?.[1];
      return n ? `Use at most ${n} characters.` : sentence(item.msg);
    }
    default:
      // pydantic's "Value error, " prefix is for programs, not people.
      return sentence((item.msg || '').replace(/^Value error, /, ''));
  }
}

/** @param {string | undefined} text */
function sentence(text) {
  if (!text) return 'This value is not accepted.';
  const t = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/** @param {number} status */
function fallback(status) {
  switch (status) {
    case 400:
      return 'Redline could not use that request. Check what you entered, then try again.';
    case 401:
      return 'You are signed out. Sign in again to go on.';
    case 403:
      return 'This account is not allowed to do that.';
    case 404:
      return 'That no longer exists, or it belongs to another account.';
    case 409:
      return 'That conflicts with a change made meanwhile. Reload, then try again.';
    case 413:
      return 'That is too large for Redline. Try a smaller file.';
    case 415:
      return 'Redline does not read that kind of file. Use PDF, DOCX, RTF, Markdown, HTML or text.';
    case 503:
      return 'Redline is briefly unavailable. Try again in a moment.';
    default:
      return status >= 500
        ? 'Something went wrong on Redline’s side. Nothing was changed; try again in a moment.'
        : 'The request was refused. Try again.';
  }
}

/** @param {string | null | undefined} iso */
export function formatDate(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
