// @ts-check
// A job's events in words (assets/editor/describe.js), in Node: no browser, no server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describe } from '../assets/editor/describe.js';

/** @param {string} id */
const place = (id) => (id === 'c1' ? 1 : null);

test('a run that starts again after a restart says the earlier steps no longer count', () => {
  const restarted = { type: 'status', content: { message: 'Reading the document', attempt: 1, supersedes: { from: 1, through: 6 } } };
  const words = describe(restarted, place);
  assert.ok(words && /restarted/.test(words) && /no longer count/.test(words), String(words));
  const first = { type: 'status', content: { message: 'Reading the document', attempt: 1 } };
  assert.equal(describe(first, place), 'Reading the document');
});

test('a review wait and a retry read as sentences', () => {
  assert.equal(describe({ type: 'status', content: { message: 'Waiting for approval', pending: 2 } }, place), 'Waiting for your review');
  assert.equal(
    describe({ type: 'status', content: { message: 'The AI model failed; trying again', wait_ms: 1500 } }, place),
    'The AI model failed; trying again in 2 s',
  );
});
