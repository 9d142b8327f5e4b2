/**
 * A person in Chromium approving a public client's device login at /activate: enters the code,
 * signs in as the demo parent, approves. Used by scripts/public-clients-sign-in.js and
 * scripts/public-clients-devices.js.
 */

/** The sign-in page as the demo parent, then "Approve this app?". */
export async function signIn(page, { email, password }) {
  await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Approve this app?' }).waitFor();
  await page.getByRole('button', { name: 'Approve' }).click();
}

export async function approveDevice(browser, account, verificationUri, userCode) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(verificationUri);
  await page.getByLabel('Code').fill(userCode);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByText('Is this your device?').waitFor();
  await page.getByRole('button', { name: 'Continue' }).click();
  await signIn(page, account);
  await page.getByRole('heading', { name: 'Device connected' }).waitFor();
  await context.close();
}
