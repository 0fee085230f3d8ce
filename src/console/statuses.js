// The statuses the console offers as filters and tabs and adds up in its counts. Nothing here lists them: they are
// GET /admin/statuses's (the domain's lists, in its order), read once at sign-in like the chains (chains.js) and
// shared through the session. Only the statuses a view singles out on purpose are named where it does so.
import { api } from './api.js';
import { useSession } from './session.js';

const NONE = { payment_statuses: [], final_payment_statuses: [], webhook_event_statuses: [] };

/** The service's statuses; none when they cannot be read (the views still show rows, without status filters). */
export async function loadStatuses() {
  try {
    return await api('/admin/statuses');
  } catch {
    return NONE;
  }
}

export function useStatuses() {
  return useSession().statuses ?? NONE;
}

/** Payments being worked by the service: neither final nor waiting for an operator (manual_review, counted apart). */
export function inProgress(statuses) {
  return statuses.payment_statuses.filter((s) => s !== 'manual_review' && !statuses.final_payment_statuses.includes(s));
}
