// Waiting for something during a shutdown, but never past the grace period.

/** Whether `work` settled before `deadlineMs` (epoch ms); it goes on either way. */
export async function settlesBy(work: Promise<unknown>, deadlineMs: number): Promise<boolean> {
  if (deadlineMs === Infinity) {
    await work.catch(() => undefined);
    return true;
  }
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, deadlineMs - Date.now()))));
  const settled = await Promise.race([work.then(() => true, () => true), late]);
  clearTimeout(timer);
  return settled;
}
