/**
 * The check of what the kernel sends: a message of the sidebar protocol (`protocol.ts`,
 * generated from the Python protocol), or a sentence saying what is wrong with it.
 */

import { KernelMessage, PROTOCOL_VERSION } from './protocol';

function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Check a message from the kernel; returns it typed, or a string saying what is wrong. */
export function readKernelMessage(data: unknown): KernelMessage | string {
  if (!isObject(data)) {
    return 'the kernel sent something that is not a JSON object';
  }
  if (data.protocol !== PROTOCOL_VERSION) {
    return (
      `the kernel speaks sidebar protocol ${String(data.protocol)}, this sidebar ` +
      `${PROTOCOL_VERSION}: reinstall jupyter-deepagent in the kernel's environment and reload`
    );
  }
  const message = data as unknown as KernelMessage;
  switch (data.type) {
    case 'threads':
      return Array.isArray(data.threads) ? message : 'bad threads';
    case 'snapshot':
      return typeof data.html === 'string' && typeof data.thread === 'string'
        ? message
        : 'bad snapshot';
    case 'file':
      return typeof data.text === 'string' && typeof data.path === 'string' ? message : 'bad file';
    case 'event':
      return isObject(data.event) ? message : 'bad event';
    case 'error':
      return typeof data.message === 'string' ? message : 'bad error';
    case 'hello':
      return message;
    default:
      return `unknown message type ${String(data.type).slice(0, 40)}`;
  }
}
