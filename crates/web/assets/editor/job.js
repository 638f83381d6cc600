// @ts-check
// The chat job the editor follows: started by a message (or found running when the page
// opens), its events turned into words as they stream, its progress bar (the job's own
// `progress`, read again at most every PROGRESS_MS while events arrive), its review, its end.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../lib/api.js';
import { followJob } from '../lib/stream.js';
import { describe, editSummary } from './describe.js';

const PROGRESS_MS = 700;

/** A job's statuses while it is not over (the API's job statuses, less the finished ones). */
export const ACTIVE = ['pending', 'in_progress', 'awaiting_approval'];
/** A job's statuses once it is over: nothing more happens to it. */
export const FINISHED = ['completed', 'failed', 'cancelled'];

/**
 * @typedef {{
 *   jobId: string, message: string, status: string, progress: number, steps: string[],
 *   edits: string | null, text: string, connection: 'reconnecting' | 'resumed' | null,
 * }} RunningJob
 * @typedef {{
 *   place: (chunkId: string) => number | null,
 *   onApproval: (jobId: string, changes: any[]) => void,
 *   onFinal: (job: any) => void,
 *   onError: (message: string) => void,
 *   onResumed: () => void,
 * }} JobHandlers
 */

/** @param {JobHandlers} handlers */
export function useJob(handlers) {
  const [job, setJob] = useState(/** @type {RunningJob | null} */ (null));
  const stop = useRef(/** @type {(() => void) | null} */ (null));
  // The handlers change with every render; the stream calls the latest.
  const latest = useRef(handlers);
  latest.current = handlers;
  useEffect(() => () => stop.current?.(), []);

  /**
   * Follows a job from its first event.
   * @param {any} body the Job as the API gave it
   */
  const follow = (body) => {
    stop.current?.();
    const jobId = String(body.job_id);
    /** @type {{type: string, content: any}[]} */
    const events = [];
    let polled = 0;
    setJob({
      jobId,
      message: String(body.metadata?.message || ''),
      status: body.status,
      progress: body.progress || 0,
      steps: [],
      edits: null,
      text: '',
      connection: null,
    });
    const update = (/** @type {(j: RunningJob) => RunningJob} */ f) => setJob((j) => (j && j.jobId === jobId ? f(j) : j));
    const poll = async () => {
      if (Date.now() - polled < PROGRESS_MS) return;
      polled = Date.now();
      try {
        const now = await api('GET', `/v1/jobs/${encodeURIComponent(jobId)}`);
        update((j) => ({ ...j, status: now.status, progress: Math.max(j.progress, now.progress || 0) }));
      } catch {
        // The bar waits for the next event.
      }
    };
    stop.current = followJob(jobId, 0, {
      onEvent: (event) => {
        events.push(event);
        const words = describe(event, latest.current.place);
        update((j) => ({
          ...j,
          status: j.status === 'pending' ? 'in_progress' : j.status,
          steps: addStep(j.steps, words),
          edits: editSummary(events),
          text: event.type === 'text_delta' ? String(event.content?.text || '') : j.text,
        }));
        poll();
      },
      onApproval: (data) => {
        performance.mark('redline:approval-required');
        update((j) => ({ ...j, status: 'awaiting_approval' }));
        latest.current.onApproval(jobId, data.pending_changes || []);
      },
      onFinal: (final) => {
        update((j) => ({ ...j, status: final.status, progress: final.progress ?? j.progress, connection: null }));
        latest.current.onFinal(final);
      },
      onError: (message) => {
        update((j) => ({ ...j, connection: null }));
        latest.current.onError(message);
      },
      onConnection: (state) => {
        update((j) => ({ ...j, connection: state }));
        if (state === 'resumed') latest.current.onResumed();
      },
    });
  };

  /** The job runs again after the reviewer's feedback. */
  const resumed = () => setJob((j) => (j ? { ...j, status: 'pending', steps: [...j.steps, 'Your feedback went to the AI; it is trying again'] } : j));

  const forget = () => {
    stop.current?.();
    stop.current = null;
    setJob(null);
  };

  return { job, follow, resumed, forget };
}

/**
 * The steps with `words` added: not twice in a row, and a step that says more about the one
 * before ("Editing section 2 (proposed for your review)" after "Editing section 2") replaces it.
 * @param {string[]} steps
 * @param {string | null} words
 */
export function addStep(steps, words) {
  if (!words) return steps;
  const last = steps[steps.length - 1];
  if (last === words) return steps;
  if (last && words.startsWith(`${last} (`)) return [...steps.slice(0, -1), words];
  return [...steps, words];
}
