// What the delivery engine's loops (engine.ts) wait on and pace themselves by.

/** A promise-based wake-up: sleep(ms) resolves after ms or as soon as wake() is called. */
export function alarm() {
  let wakeUp: (() => void) | undefined;
  let pending = false;
  return {
    wake() {
      pending = true;
      const resolve = wakeUp;
      wakeUp = undefined;
      resolve?.();
    },
    sleep(ms: number) {
      if (pending) {
        pending = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          wakeUp = undefined;
          resolve();
        }, ms);
        wakeUp = () => {
          clearTimeout(timer);
          pending = false;
          resolve();
        };
      });
    },
  };
}

export type Alarm = ReturnType<typeof alarm>;

/**
 * Attempts completed lately: in the current tenth of a second and the one before. It bounds how
 * many leased deliveries a worker holds ahead of its sender — enough to cover a statement's
 * round trip at the rate it is sending, and next to none when its receivers are slow, so that a
 * busy worker does not sit on deliveries another could send.
 */
export function completions() {
  let tenth = 0;
  let current = 0;
  let previous = 0;
  const roll = () => {
    const now = Math.floor(performance.now() / 100);
    if (now === tenth) return;
    previous = now === tenth + 1 ? current : 0;
    current = 0;
    tenth = now;
  };
  return {
    add() {
      roll();
      current++;
    },
    lately() {
      roll();
      return current + previous;
    },
  };
}
