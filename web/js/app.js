// The page: header, hash routes, and the rule that every screen but the log-in
// forms needs a session. After logging in you land where you were going, or
// back in your match in progress.

import * as api from './api.js';
import * as auth from './auth.js';
import * as challenges from './challenges.js';
import { h, replace, showError } from './dom.js';
import * as ladders from './ladders.js';
import * as lobby from './lobby.js';
import * as match from './match.js';
import * as profile from './profile.js';
import * as queue from './queue.js';
import * as room from './room.js';
import * as tournament from './tournament.js';
import * as tournaments from './tournaments.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
let unmount = () => {};
let returnTo = null;

/** Goes to `hash` (re-rendering even when it is the current one). */
function go(hash) {
  if (location.hash === hash) render();
  else location.hash = hash;
}

const ROUTES = [
  [/^#?\/?$/, () => lobby.mount(main, go)],
  [/^#\/match\/([\w-]+)$/, (id) => match.mount(main, id, go)],
  [/^#\/room\/([A-Za-z0-9]{6})$/, (code) => room.mount(main, code.toUpperCase(), go)],
  [/^#\/queue\/([\w-]+)$/, (id) => queue.mount(main, id, go)],
  [/^#\/profile$/, () => profile.mount(main, null)],
  [/^#\/players\/([^/]+)$/, (name) => profile.mount(main, decodeURIComponent(name))],
  [/^#\/ladders$/, () => ladders.mount(main, null, go)],
  [/^#\/ladders\/([^/]+)$/, (id) => ladders.mount(main, decodeURIComponent(id), go)],
  [/^#\/tournaments$/, () => tournaments.mount(main, go)],
  [/^#\/tournaments\/([^/]+)$/, (id) => tournament.mount(main, decodeURIComponent(id), go)],
];

function renderNav() {
  const me = api.me();
  replace(nav, me
    ? [h('a', { href: '#/' }, 'Play'),
      h('a', { href: '#/ladders' }, 'Leaderboards'),
      h('a', { href: '#/tournaments' }, 'Tournaments'),
      h('a', { href: '#/profile', class: 'me', 'aria-label': `Your profile (${me.username})` }, me.username),
      h('button', { type: 'button', class: 'link', onclick: logout }, 'Log out')]
    : [h('a', { href: '#/login' }, 'Log in'), h('a', { href: '#/register' }, 'Sign up')]);
}

async function logout() {
  await api.logout();
  go('#/login');
}

/** Where to go once logged in: where the player was going, else their newest match in progress. */
async function afterLogin() {
  const target = returnTo;
  returnTo = null;
  if (target && target !== '#/' && !/^#\/(login|register)/.test(target)) return go(target);
  try {
    const page = await api.get('/me/matches?status=active&limit=1');
    if (page.items.length) return go(`#/match/${page.items[0].id}`);
  } catch (err) {
    showError(err);
  }
  go('#/');
}

function render(message) {
  unmount();
  unmount = () => {};
  document.title = 'uttt';
  renderNav();
  // Incoming challenges show as notices on every screen while logged in.
  if (api.me()) challenges.start(go);
  else challenges.stop();
  window.scrollTo(0, 0);
  const hash = location.hash || '#/';
  const authRoute = /^#\/(login|register)$/.exec(hash);
  if (!api.me()) {
    if (!authRoute) returnTo = hash;
    unmount = auth.mount(main, authRoute?.[1] === 'register' ? 'register' : 'login', afterLogin, message);
    return;
  }
  if (authRoute) return go('#/');
  for (const [pattern, mount] of ROUTES) {
    const found = pattern.exec(hash);
    if (found) {
      unmount = mount(...found.slice(1)) ?? (() => {});
      return;
    }
  }
  replace(main, h('section', { class: 'screen card' }, h('h1', {}, 'Nothing here'), h('a', { href: '#/' }, 'Back to the lobby')));
}

api.onSessionChange((player, reason) => {
  challenges.stop();
  if (!player) render(reason === 'expired' ? 'Your session has ended: please log in again.' : undefined);
  else if (reason === 'other-tab') render();
});
window.addEventListener('hashchange', () => render());
// The skip link moves the focus; the hash is the router's.
document.querySelector('.skip')?.addEventListener('click', (e) => {
  e.preventDefault();
  main.focus();
});
window.addEventListener('unhandledrejection', (e) => {
  if (e.reason && e.reason.title !== undefined) {
    e.preventDefault();
    showError(e.reason);
  }
});
render();
