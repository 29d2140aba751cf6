// Log in and sign up.

import * as api from './api.js';
import { field, formError, h, replace } from './dom.js';

/**
 * Mounts the form of `mode` ('login' | 'register') into `root`; `done()` is
 * called once logged in.
 */
export function mount(root, mode, done, message) {
  const register = mode === 'register';
  const form = h('form', { class: 'stack', 'aria-label': register ? 'Sign up' : 'Log in' },
    field('Username', h('input', {
      name: 'username', required: true, autocomplete: 'username', minlength: 3, maxlength: 24,
      pattern: '[A-Za-z0-9_\\-]{3,24}', autocapitalize: 'none', spellcheck: 'false',
    })),
    field('Password', h('input', {
      name: 'password', type: 'password', required: true, minlength: register ? 8 : null, maxlength: 128,
      autocomplete: register ? 'new-password' : 'current-password',
    })),
    register ? h('p', { class: 'muted' }, '3 to 24 letters, digits, _ or -; a password of at least 8 characters.') : null,
    h('p', { class: 'form-error', role: 'alert' }),
    h('button', { type: 'submit', class: 'primary' }, register ? 'Sign up' : 'Log in'));

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const data = new FormData(form);
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    formError(form, null);
    try {
      const username = String(data.get('username')).trim();
      const password = String(data.get('password'));
      if (register) await api.register(username, password);
      else await api.login(username, password);
      done();
    } catch (err) {
      formError(form, err);
    } finally {
      button.disabled = false;
    }
  });

  replace(root, h('section', { class: 'screen auth card' },
    h('h1', {}, register ? 'Sign up' : 'Log in'),
    message ? h('p', { class: 'notice-inline' }, message) : null,
    h('p', { class: 'muted' }, 'Ultimate Tic-Tac-Toe on boards of depth 1 to 4: practise against the CPU, play a friend, climb the ladders.'),
    form,
    h('p', {}, register
      ? ['Have an account? ', h('a', { href: '#/login' }, 'Log in')]
      : ['New here? ', h('a', { href: '#/register' }, 'Sign up')])));
  form.querySelector('input').focus();
  return () => {};
}
