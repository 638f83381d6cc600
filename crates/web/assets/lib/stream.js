// @ts-check
// Follows a job's event stream (`GET /v1/jobs/{id}/events`, docs/api.md "Chat and jobs") with
// fetch, not EventSource: fetch sends the `Redline-Organization` header and `Last-Event-ID`
// itself, and tells an HTTP refusal from a dropped connection. A stream that ends before its
// `final` frame, or breaks, is opened again from the last event seen, and the caller is told
// so ("reconnecting", then "resumed").
import { actingFor, problem } from './api.js';

/**
 * @typedef {{type: string, content: any, sequence: number, timestamp: string}} JobEvent
 * @typedef {{
 *   onEvent: (event: JobEvent) => void,
 *   onApproval: (data: {job_id: string, pending_changes: any[]}) => void,
 *   onFinal: (job: any) => void,
 *   onError: (message: string) => void,
 *   onConnection?: (state: 'reconnecting' | 'resumed') => void,
 * }} Handlers
 */

/** How long to wait before the n-th attempt to reconnect (ms). @param {number} attempt */
function backoff(attempt) {
  return Math.min(5000, 250 * 2 ** attempt);
}

const MAX_ATTEMPTS = 12;

/**
 * Follows a job until its `final` frame. Returns a function that stops following.
 * @param {string} jobId
 * @param {number} after the last event already shown (0: from the start)
 * @param {Handlers} on
 */
export function followJob(jobId, after, on) {
  const controller = new AbortController();
  let last = after;
  let attempt = 0;
  let dropped = false;
  let done = false;

  const run = async () => {
    while (!done && !controller.signal.aborted) {
      /** @type {Record<string, string>} */
      const headers = { Accept: 'text/event-stream' };
      const org = actingFor();
      if (org) headers['Redline-Organization'] = org;
      if (last > 0) headers['Last-Event-ID'] = String(last);
      let res;
      try {
        res = await fetch(`/v1/jobs/${encodeURIComponent(jobId)}/events`, {
          headers,
          credentials: 'same-origin',
          signal: controller.signal,
        });
      } catch {
        if (controller.signal.aborted) return;
        res = null;
      }
      if (res && !res.ok) {
        const text = await res.text().catch(() => '');
        let body = null;
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
        // A refusal is an answer, not a dropped line: say it and stop (a 5xx is tried again).
        if (res.status < 500) {
          done = true;
          on.onError(problem(res.status, body, (name) => res.headers.get(name)).message);
          return;
        }
      } else if (res && res.body) {
        if (dropped) {
          dropped = false;
          on.onConnection?.('resumed');
        }
        attempt = 0;
        try {
          await read(res.body, (frame) => {
            if (frame.id !== null) last = Math.max(last, Number(frame.id) || 0);
            handle(frame);
          });
        } catch {
          if (controller.signal.aborted) return;
        }
        if (done || controller.signal.aborted) return;
      }
      // The stream ended before `final`, or could not be opened: open it again from `last`.
      if (attempt >= MAX_ATTEMPTS) {
        done = true;
        on.onError('The connection to Redline was lost and could not be restored. Reload the page to see how the job went.');
        return;
      }
      if (!dropped) {
        dropped = true;
        on.onConnection?.('reconnecting');
      }
      await sleep(backoff(attempt++), controller.signal);
    }
  };

  /** @param {{event: string, data: string, id: string | null}} frame */
  const handle = (frame) => {
    let data;
    try {
      data = JSON.parse(frame.data);
    } catch {
      return;
    }
    switch (frame.event) {
      case 'intermediate':
        on.onEvent(data);
        break;
      case 'approval_required':
        on.onApproval(data);
        break;
      case 'final':
        done = true;
        on.onFinal(data);
        controller.abort();
        break;
      case 'error':
        // The job is gone (deleted with its session), or its events could not be read: the
        // latter is worth another try from the last event.
        if (/deleted|not found|no longer exists/i.test(String(data.detail))) {
          done = true;
          on.onError(String(data.detail));
          controller.abort();
        }
        break;
      default:
        break;
    }
  };

  run();
  return () => {
    done = true;
    controller.abort();
  };
}

/**
 * Reads Server-Sent Events frames from a body until it ends.
 * @param {ReadableStream<Uint8Array>} body
 * @param {(frame: {event: string, data: string, id: string | null}) => void} onFrame
 */
async function read(body, onFrame) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = frameEnd(buffer)) >= 0) {
      const raw = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^(\r\n|\r|\n){2}/, '');
      const frame = parseFrame(raw);
      if (frame) onFrame(frame);
    }
  }
}

/** Where the first complete frame ends (before its blank line), or -1. @param {string} buffer */
function frameEnd(buffer) {
  const m = /(\r\n|\r|\n)(\r\n|\r|\n)/.exec(buffer);
  return m ? m.index : -1;
}

/** @param {string} raw */
function parseFrame(raw) {
  let event = 'message';
  /** @type {string[]} */
  const data = [];
  /** @type {string | null} */
  let id = null;
  for (const line of raw.split(/\r\n|\r|\n/)) {
    if (!line || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id') id = value;
  }
  if (data.length === 0) return null;
  return { event, data: data.join('\n'), id };
}

/** @param {number} ms @param {AbortSignal} signal */
function sleep(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(null);
    });
  });
}
