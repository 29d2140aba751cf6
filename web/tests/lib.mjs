// Shared steps of the browser tests: a headless Chromium (Debian's, driven by
// playwright-core) against the server at UTTT_URL.

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export { assert };

export const BASE = (process.env.UTTT_URL ?? 'http://127.0.0.1:8080').replace(/\/$/, '');
export const SHOTS = process.env.UTTT_SCREENSHOTS
  ?? fileURLToPath(new URL('../../target/web-screenshots/', import.meta.url));
export const PASSWORD = 'correct horse battery';
const TIMEOUT = Number(process.env.UTTT_STEP_TIMEOUT_MS ?? 20_000);

/** Launches Chromium with the flags that work in a sandbox without a GPU or network. */
export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * A page in a fresh context (its own localStorage). Page errors, failed
 * requests to other hosts and console errors fail the test at `check()`.
 */
export async function open(browser, options = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  context.setDefaultTimeout(TIMEOUT);
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !/status of 4\d\d/.test(msg.text())) problems.push(`console: ${msg.text()}`);
  });
  page.on('request', (req) => {
    if (!req.url().startsWith(BASE) && !req.url().startsWith('data:')) problems.push(`outside request: ${req.url()}`);
  });
  page.check = () => assert.deepEqual(problems, [], 'the page reported problems');
  await page.goto(`${BASE}/`);
  return page;
}

/** Calls the API from Node, as a program (a bot, another player) would; fails on an error answer. */
export async function call(method, path, body, token) {
  const res = await fetch(`${BASE}/api/v1${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** Fails when the page is wider than its screen (it would scroll sideways). */
export async function fitsTheWidth(page) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
}

/** A username nobody has taken yet. */
export function uniqueName(prefix) {
  return `${prefix}_${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`.slice(0, 24);
}

let stepNo = 0;
/** Runs one named step, printing its time. */
export async function step(name, fn) {
  stepNo += 1;
  const started = Date.now();
  try {
    const out = await fn();
    console.log(`ok ${stepNo} - ${name} (${Date.now() - started} ms)`);
    return out;
  } catch (err) {
    console.log(`not ok ${stepNo} - ${name} (${Date.now() - started} ms)`);
    throw err;
  }
}

/** Runs a test body with a browser, closing it and setting the exit code. */
export async function run(name, body) {
  mkdirSync(SHOTS, { recursive: true });
  const browser = await launch();
  const started = Date.now();
  let failed = false;
  try {
    await body(browser);
  } catch (err) {
    failed = true;
    console.error(`${name} failed:`, err);
    for (const [i, context] of browser.contexts().entries()) {
      for (const [j, page] of context.pages().entries()) {
        const path = join(SHOTS, `failure-${name}-${i}-${j}.png`);
        await page.screenshot({ path, fullPage: true }).catch(() => {});
        console.error(`screenshot of the page: ${path} (at ${page.url()})`);
      }
    }
  } finally {
    await browser.close();
  }
  console.log(`${name}: ${stepNo} steps, ${failed ? 'FAILED' : 'passed'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exitCode = failed ? 1 : 0;
}

/** Signs up `username` through the form and waits for the lobby. */
export async function signUp(page, username) {
  await page.getByRole('link', { name: 'Sign up' }).first().click();
  await page.getByRole('heading', { name: 'Sign up' }).waitFor();
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await page.locator('.screen.lobby').waitFor();
  await page.getByRole('link', { name: `Your profile (${username})` }).waitFor();
}

/** Logs in through the form (the page must show it). */
export async function logIn(page, username) {
  await page.getByRole('heading', { name: 'Log in' }).waitFor();
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('link', { name: `Your profile (${username})` }).waitFor();
}

/** Starts a practice match from the lobby form; answers the match id. */
export async function startPractice(page, { depth = 2, level = 1, time = 'none', seat = 'x' } = {}) {
  const form = page.getByRole('form', { name: 'Practise against the CPU' });
  await form.getByLabel('Board depth').selectOption(String(depth));
  await form.getByLabel('CPU level').selectOption(String(level));
  await form.getByLabel('Time control').selectOption(time);
  await form.getByLabel('You play').selectOption(seat);
  await form.getByRole('button', { name: 'Play the CPU' }).click();
  await page.waitForURL(/#\/match\//);
  await page.locator('section.match[data-status]').waitFor();
  return matchId(page);
}

/** The id of the match on screen. */
export function matchId(page) {
  return new URL(page.url()).hash.replace('#/match/', '');
}

/** What the match screen shows now. */
export function screen(page) {
  return page.evaluate(() => {
    const m = document.querySelector('section.match');
    if (!m) return null;
    return {
      ply: Number(m.dataset.ply), status: m.dataset.status, turn: m.dataset.turn, mySeat: m.dataset.mySeat,
      view: document.querySelector('.board-frame')?.dataset.view ?? null,
      enabled: [...document.querySelectorAll('button.cell:not([disabled])')].map((b) => b.dataset.address),
      cells: document.querySelectorAll('button.cell').length,
      tiles: [...document.querySelectorAll('button.board.tile')].map((b) => b.dataset.board),
      legalTiles: [...document.querySelectorAll('button.board.tile.has-legal')].map((b) => b.dataset.board),
      target: [...document.querySelectorAll('.board.target')].map((b) => b.dataset.board),
    };
  });
}

/** Calls the API as the page's player (for checks against what the screen shows). */
export function apiAs(page, method, path, body) {
  return page.evaluate(async ([m, p, b]) => {
    const token = JSON.parse(localStorage.getItem('uttt.session')).access_token;
    const res = await fetch(`/api/v1${p}`, {
      method: m,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: b === undefined ? undefined : JSON.stringify(b),
    });
    return res.status === 204 ? null : res.json();
  }, [method, path, body]);
}

/** Waits until it is the player's turn with legal squares on screen, or the match is over. */
export async function waitForTurn(page) {
  await page.waitForFunction(() => {
    const m = document.querySelector('section.match');
    if (!m) return false;
    if (m.dataset.status === 'finished') return true;
    if (m.dataset.turn !== m.dataset.mySeat) return false;
    return document.querySelector('button.cell:not([disabled]), button.board.tile.has-legal, button.go-target');
  });
  return screen(page);
}

/**
 * Plays one move by clicking: browses into a highlighted sub-board first when
 * the view is above the squares. `pick` chooses among the enabled squares.
 * Answers the screen after the move was accepted.
 */
export async function playMove(page, pick = (list) => list[Math.floor(Math.random() * list.length)]) {
  let s = await waitForTurn(page);
  if (s.status === 'finished') return s;
  for (let hops = 0; !s.enabled.length && hops < 4; hops += 1) {
    if (s.legalTiles.length) await page.locator(`button.board.tile[data-board="${s.legalTiles[0]}"]`).click();
    else await page.locator('button.go-target').click();
    s = await screen(page);
  }
  assert.ok(s.enabled.length, 'a legal square is on screen');
  const address = pick(s.enabled);
  const before = s.ply;
  await page.locator(`button.cell[data-address="${address}"]`).click();
  await page.waitForFunction((ply) => Number(document.querySelector('section.match').dataset.ply) > ply, before);
  return { ...(await screen(page)), played: address };
}

/** Plays until the match ends (the CPU answers through the server's worker); answers the number of moves made. */
export async function playToTheEnd(page, limit = 400) {
  let moves = 0;
  for (; moves < limit; moves += 1) {
    const s = await waitForTurn(page);
    if (s.status === 'finished') return moves;
    await playMove(page);
  }
  throw new Error(`the match did not end after ${limit} moves`);
}
