// The session: problem+json errors shown in the forms, the access token
// refreshed before it expires (the server here gives 65-second tokens, so
// the client refreshes every five seconds), two tabs sharing one session
// without spending a refresh token twice, and a rejected token refreshed
// and the call retried.

import { apiAs, assert, open, PASSWORD, run, signUp, step, uniqueName } from './lib.mjs';

const session = (page) => page.evaluate(() => JSON.parse(localStorage.getItem('uttt.session')));

await run('session', async (browser) => {
  const page = await open(browser);
  const name = uniqueName('tok');
  await step('sign up', () => signUp(page, name));

  await step('a taken username and a wrong password are shown as the server words them', async () => {
    const other = await open(browser);
    // Each form is found by its name before it is filled: the link only
    // changes the hash, and the new form replaces the old one a moment later.
    await other.getByRole('link', { name: 'Sign up' }).first().click();
    const signUp = other.getByRole('form', { name: 'Sign up' });
    await signUp.getByLabel('Username').fill(name.toUpperCase());
    await signUp.getByLabel('Password').fill(PASSWORD);
    await signUp.getByRole('button', { name: 'Sign up' }).click();
    await signUp.locator('.form-error', { hasText: /taken/i }).waitFor();
    await other.getByRole('link', { name: 'Log in' }).last().click();
    const logIn = other.getByRole('form', { name: 'Log in' });
    await logIn.getByLabel('Username').fill(name);
    await logIn.getByLabel('Password').fill('not the password');
    await logIn.getByRole('button', { name: 'Log in' }).click();
    await logIn.locator('.form-error', { hasText: /invalid|credentials/i }).waitFor();
    other.check();
    await other.context().close();
  });

  const first = await session(page);
  await step('the access token is refreshed before it expires', async () => {
    await page.waitForFunction((t) => JSON.parse(localStorage.getItem('uttt.session')).refresh_token !== t,
      first.refresh_token, { timeout: 15_000 });
    const next = await session(page);
    assert.notEqual(next.access_token, first.access_token);
    assert.ok(next.expires_at > first.expires_at);
    const me = await apiAs(page, 'GET', '/me');
    assert.equal(me.username, name);
  });

  await step('two tabs share the session through several refreshes', async () => {
    const tab = await page.context().newPage();
    await tab.goto(`${page.url().split('#')[0]}#/profile`);
    await tab.locator('table.ratings').waitFor();
    const start = (await session(page)).refresh_token;
    // Long enough for two refresh rounds in both tabs.
    await page.waitForTimeout(11_000);
    assert.notEqual((await session(page)).refresh_token, start, 'refreshed meanwhile');
    for (const p of [page, tab]) {
      assert.equal((await apiAs(p, 'GET', '/me')).username, name);
      await p.reload();
      await p.getByRole('link', { name: `Your profile (${name})` }).waitFor();
      assert.equal(await p.getByText('Your session has ended').count(), 0);
    }
    await tab.close();
  });

  await step('a rejected access token is refreshed and the call retried', async () => {
    const before = await session(page);
    // Both copies of the session (localStorage and IndexedDB) hold a token the server rejects.
    await page.evaluate(() => new Promise((resolve, reject) => {
      const s = JSON.parse(localStorage.getItem('uttt.session'));
      s.access_token = 'not-a-token';
      localStorage.setItem('uttt.session', JSON.stringify(s));
      const req = indexedDB.open('uttt', 1);
      req.onsuccess = () => {
        const tx = req.result.transaction('kv', 'readwrite');
        tx.objectStore('kv').put(s, 'uttt.session');
        tx.oncomplete = resolve;
        tx.onerror = () => reject(tx.error);
      };
      req.onerror = () => reject(req.error);
    }));
    await page.goto(`${page.url().split('#')[0]}#/profile`);
    await page.reload();
    await page.locator('table.ratings').waitFor();
    const after = await session(page);
    assert.notEqual(after.access_token, 'not-a-token');
    assert.notEqual(after.refresh_token, before.refresh_token, 'a new pair was made');
  });

  await step('logging out ends the session on the server too', async () => {
    const { refresh_token: token } = await session(page);
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    assert.equal(await session(page), null);
    const status = await page.evaluate(async (t) => (await fetch('/api/v1/auth/refresh', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ refresh_token: t }),
    })).status, token);
    assert.equal(status, 401);
  });
  page.check();
});
