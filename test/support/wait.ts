/**
 * Waiting for what the package does, not for a time: `until` looks again every `every` ms until
 * the check holds, and fails with what it waited for (and `detail()`, say a process's output)
 * once `ms` ran out. It is the only poll loop of the tests; a test that waits a fixed time checks
 * that something does NOT happen in it, or waits for the clock itself, and says which beside it.
 */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  ms = 10_000,
  options: { every?: number; detail?: () => string } = {},
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end)
      throw new Error(`timed out waiting for ${what}${options.detail ? `\n${options.detail()}` : ''}`);
    await new Promise((r) => setTimeout(r, options.every ?? 50));
  }
}
