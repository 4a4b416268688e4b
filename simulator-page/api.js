/** The page's calls to the simulator API. */
const base = document.documentElement.dataset.base || '';
const API = base + '/api';

export async function getJson(path) {
  const res = await fetch(API + path, { headers: { accept: 'application/json' } });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.message || 'HTTP ' + res.status);
  return body;
}

export async function post(path, body) {
  const res = await fetch(API + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(answer.message || 'HTTP ' + res.status);
  return answer;
}

export function watch(bot, user, onView, onLive) {
  const q = '?bot=' + encodeURIComponent(bot) + '&user=' + encodeURIComponent(user);
  const es = new EventSource(API + '/events' + q);
  es.addEventListener('view', (e) => onView(JSON.parse(e.data)));
  es.addEventListener('open', () => onLive(true));
  es.addEventListener('error', () => onLive(false));
  return es;
}
