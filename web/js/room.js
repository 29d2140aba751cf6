// A room's waiting screen: its code to share, until the second player joins
// and the game starts (`match_found` on /me/events, and the room read every
// two seconds).

import * as api from './api.js';
import { depthText, h, replace, showError, timeControlText } from './dom.js';

const POLL_MS = 2000;

/** Mounts the room `code` into `root`. */
export function mount(root, code, go) {
  const box = h('section', { class: 'screen room card' }, h('p', {}, 'Loading the room…'));
  replace(root, box);
  let stopped = false;
  let timer = null;

  const show = (room) => {
    const me = api.me();
    const host = room.host.id === me?.id;
    const guestSeat = !room.guest && !host;
    replace(box,
      h('h1', {}, 'Room ', h('span', { class: 'room-code', dataset: { code: room.code } }, room.code)),
      h('p', {}, `${depthText(room.depth)} (depth ${room.depth}) · ${timeControlText(room.time_control)}`),
      h('p', {}, `Host: ${room.host.username}`, room.guest ? ` · Guest: ${room.guest.username}` : ''),
      host && !room.guest
        ? h('p', { class: 'waiting', 'aria-live': 'polite' }, 'Share this code with your opponent. The game starts when they join.')
        : null,
      guestSeat
        ? h('button', { type: 'button', class: 'primary', onclick: () => join(room.code) }, 'Join this room')
        : null,
      h('p', {}, h('a', { href: '#/' }, 'Back to the lobby')));
  };

  const join = async (c) => {
    try {
      const room = await api.post(`/rooms/${api.seg(c)}/join`);
      if (room.match_id) go(`#/match/${room.match_id}`);
    } catch (err) {
      showError(err);
    }
  };

  const poll = async () => {
    try {
      const room = await api.get(`/rooms/${api.seg(code)}`);
      if (stopped) return;
      const me = api.me()?.id;
      const seated = room.host.id === me || room.guest?.id === me;
      if (room.match_id && seated) {
        go(`#/match/${room.match_id}`);
        return;
      }
      show(room);
    } catch (err) {
      if (stopped) return;
      if (err.status === 404) {
        replace(box, h('h1', {}, 'No room has this code'), h('p', {}, h('a', { href: '#/' }, 'Back to the lobby')));
        return;
      }
      showError(err);
    }
    timer = setTimeout(poll, POLL_MS);
  };
  // The start of the game also arrives as `match_found` on the player's own stream.
  let es = null;
  api.events('/me/events').then((source) => {
    if (stopped) { source.close(); return; }
    es = source;
    es.addEventListener('match_found', (e) => {
      try {
        const data = JSON.parse(e.data);
        if (data.room_code && data.room_code.toUpperCase() === code.toUpperCase()) go(`#/match/${data.match_id}`);
      } catch {
        // The poll finds it.
      }
    });
  }).catch(() => {});
  poll();
  return () => {
    stopped = true;
    clearTimeout(timer);
    es?.close();
  };
}
