// Small DOM helpers: building elements, notices, and showing API errors.

/**
 * Makes an element: `h('button', {class: 'x', onclick: fn}, 'text', child)`.
 * Attributes starting with `on` become listeners; `dataset` and `style`
 * take objects; `false`/`null` attributes and children are left out.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2), value);
    } else if (name === 'dataset') {
      Object.assign(el.dataset, value);
    } else if (name === 'style') {
      for (const [prop, v] of Object.entries(value)) el.style.setProperty(prop, v);
    } else if (name === 'class') {
      el.className = value;
    } else if (value === true) {
      el.setAttribute(name, '');
    } else {
      el.setAttribute(name, String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces the children of `el`. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A passing notice at the bottom of the page. */
export function notice(text, kind = 'info', ms = 5000) {
  const area = document.getElementById('notices');
  if (!area) return;
  const item = h('div', { class: `notice notice-${kind}`, role: kind === 'error' ? 'alert' : 'status' },
    h('span', {}, text),
    h('button', { class: 'notice-close', type: 'button', 'aria-label': 'Dismiss', onclick: () => item.remove() }, '×'));
  area.append(item);
  if (ms) setTimeout(() => item.remove(), ms);
}

/** The text of an error: the problem's title and detail, or the message. */
export function describeError(err) {
  if (err && err.title !== undefined) {
    const detail = err.detail && err.detail !== err.title ? `: ${err.detail}` : '';
    return `${err.title}${detail}`;
  }
  return String(err?.message ?? err);
}

/** Shows an API error as a notice. */
export function showError(err) {
  console.warn(err);
  notice(describeError(err), 'error', 8000);
}

/**
 * Shows an API error inside a form: each `validation_failed` field message
 * next to its input (`name` = field), the rest in the form's error line.
 */
export function formError(form, err) {
  for (const old of form.querySelectorAll('.field-error')) old.remove();
  for (const input of form.querySelectorAll('[aria-invalid]')) input.removeAttribute('aria-invalid');
  const line = form.querySelector('.form-error');
  if (!err) {
    if (line) line.textContent = '';
    return;
  }
  let placed = 0;
  for (const f of err.fields ?? []) {
    const input = form.querySelector(`[name="${CSS.escape(f.field)}"]`);
    if (!input) continue;
    input.setAttribute('aria-invalid', 'true');
    input.closest('label')?.append(h('span', { class: 'field-error' }, f.message));
    placed += 1;
  }
  if (line) line.textContent = placed && placed === err.fields.length ? '' : describeError(err);
  else if (!placed) showError(err);
}

/** A select built from `[value, label]` pairs. */
export function select(name, options, selected) {
  return h('select', { name, id: name },
    options.map(([value, label]) => h('option', { value, selected: String(value) === String(selected) }, label)));
}

/** A labelled form field. */
export function field(label, control) {
  return h('label', { class: 'field' }, h('span', { class: 'field-label' }, label), control);
}

/** Formats a duration in ms as "1 min 5 s". */
export function duration(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
}

/** A tournament score in words, halves as ½: 1.5 → "1½", 0.5 → "½". */
export function scoreText(n) {
  const whole = Math.floor(n + 1e-9);
  const half = n - whole >= 0.25 && n - whole < 0.75;
  if (half) return whole ? `${whole}½` : '½';
  return String(Math.round(n));
}

/** A rank in words: "1st", "2nd", "3rd", "4th", "11th", "21st"… */
export function ordinal(n) {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : ['th', 'st', 'nd', 'rd'][n % 10] ?? 'th';
  return `${n}${suffix}`;
}

/** A time control in words. */
export function timeControlText(tc) {
  if (!tc || tc.kind === 'none') return 'no time limit';
  if (tc.kind === 'per_turn') return `${tc.turn_ms / 1000} s a turn`;
  const inc = tc.increment_ms ? ` + ${tc.increment_ms / 1000} s` : '';
  return `${duration(tc.initial_ms)}${inc}`;
}

/** A depth in words. */
export function depthText(depth) {
  return ['', 'tic-tac-toe', 'ultimate', 'advanced', 'deep'][depth] ?? `depth ${depth}`;
}
