// @ts-check
// Preact elements from tagged templates (htm): no JSX, so no build step.
import { h } from 'preact';
import htm from 'htm';

/** @type {(strings: TemplateStringsArray, ...values: any[]) => any} */
export const html = htm.bind(h);
