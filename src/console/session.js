// Who is signed in (GET /admin/me: actor, name, role, permissions), who the other operators are (GET
// /admin/operators), which chains the service pays out on (chains.js) and its statuses (statuses.js), shared with
// every view. Views offer only what the role may do (decision 112); the service refuses the rest anyway, and the
// console shows that refusal.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { html } from './html.js';

export const SessionContext = createContext({ me: null, names: new Map(), chains: [], statuses: null, signOut: () => {} });

export function useSession() {
  return useContext(SessionContext);
}

/** True when the signed-in role holds `permission` (read, operate, approve, administer). */
export function useCan(permission) {
  return useSession().me?.permissions?.includes(permission) ?? false;
}

/** Actors that are not operators, as the audit log names them (decision 102). */
const SPECIAL = {
  'break-glass': 'break-glass (ADMIN_TOKEN)',
  local: 'local (development)',
  anonymous: 'anonymous',
};

/** The readable name of an actor id: an operator's name, the CLI's OS user, or the id itself when unknown. */
export function actorName(names, id) {
  if (!id) return null;
  if (names.has(id)) return names.get(id).name;
  if (SPECIAL[id]) return SPECIAL[id];
  // cli:<uid>(<name>) (decision 180): the name for people, the uid kept on hover.
  const cli = /^cli:([^(]*)(?:\((.*)\))?$/.exec(id);
  if (cli) return cli[2] ? `${cli[2]} (CLI, uid ${cli[1]})` : `uid ${cli[1]} (CLI)`;
  return id;
}

/** An actor by name, the id (and role, when known) on hover; `you` marks the signed-in operator. */
export function Who({ id }) {
  const { me, names } = useSession();
  if (!id) return html`<span class="muted">—</span>`;
  const operator = names.get(id);
  const title = operator ? `${id} · ${operator.role}${operator.status === 'disabled' ? ' · disabled' : ''}` : id;
  return html`<span class="who" title=${title} data-actor=${id}>${actorName(names, id)}${me?.actor === id ? html` <span class="muted small">(you)</span>` : null}</span>`;
}
