// Hash routes (#/payments?status=settled, #/payments/pi_...): the page is one file, reloads and the back button work,
// and the server never sees client-side paths.
import { useEffect, useState } from 'preact/hooks';

export function parseHash(hash = location.hash) {
  const [path, search = ''] = hash.replace(/^#/, '').split('?');
  const segments = (path || '/payments').split('/').filter(Boolean).map(decodeURIComponent);
  return { segments, params: Object.fromEntries(new URLSearchParams(search)) };
}

export function href(path, params = {}) {
  const search = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== '')).toString();
  return `#${path}${search ? `?${search}` : ''}`;
}

export function navigate(path, params) {
  location.hash = href(path, params);
}

export function useRoute() {
  const [route, setRoute] = useState(parseHash());
  useEffect(() => {
    const update = () => setRoute(parseHash());
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}
