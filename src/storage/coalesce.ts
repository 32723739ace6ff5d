// Group commit for one hot statement: calls that arrive while earlier ones are still in the
// database wait, and go together as one statement, so one commit (one WAL flush, one round trip)
// serves many requests. Under load the database spends most of a small insert's time committing;
// alone, a call goes at once and waits for nothing but the batches already in flight.
//
// Each call's writes stay atomic: a batch is one statement, hence one transaction, that holds every
// call's rows whole. A batch that fails is not one call's failure to hand to all: its calls are
// run again one by one, so each gets its own answer or its own error (unless the error is no
// call's own, such as an outage).
export interface CoalesceOptions<I, O> {
  /** Runs a batch; answers one output per input, in order. */
  run(batch: I[]): Promise<O[]>;
  /**
   * Calls with the same key never share a batch (a batch of one statement cannot see its own
   * rows' conflicts as a second call would): the later one waits for the next batch.
   */
  key(input: I): string;
  /** Batches in the database at once; more calls wait and join the next. */
  maxInFlight: number;
  /** Inputs per batch at most. */
  maxBatch: number;
  /** An error that would be every call's alone too (the database is away): handed to all at once. */
  everyones?(err: unknown): boolean;
}

interface Waiting<I, O> {
  input: I;
  resolve(output: O): void;
  reject(err: unknown): void;
}

export function coalesce<I, O>(opts: CoalesceOptions<I, O>): (input: I) => Promise<O> {
  const queue: Waiting<I, O>[] = [];
  let inFlight = 0;
  let scheduled = false;

  const runAlone = (w: Waiting<I, O>) =>
    opts.run([w.input]).then(
      ([output]) => w.resolve(output!),
      (err) => w.reject(err),
    );

  const launch = async (batch: Waiting<I, O>[]) => {
    inFlight++;
    try {
      let outputs: O[] | undefined;
      try {
        outputs = await opts.run(batch.map((w) => w.input));
      } catch (err) {
        if (batch.length === 1 || opts.everyones?.(err)) batch.forEach((w) => w.reject(err));
        else await Promise.all(batch.map(runAlone));
        return;
      }
      batch.forEach((w, i) => w.resolve(outputs[i]!));
    } finally {
      inFlight--;
      drain();
    }
  };

  function drain(): void {
    while (inFlight < opts.maxInFlight && queue.length > 0) {
      const keys = new Set<string>();
      const batch: Waiting<I, O>[] = [];
      for (let i = 0; i < queue.length && batch.length < opts.maxBatch; ) {
        const key = opts.key(queue[i]!.input);
        if (keys.has(key)) {
          i++;
          continue;
        }
        keys.add(key);
        batch.push(queue.splice(i, 1)[0]!);
      }
      void launch(batch);
    }
  }

  return (input) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ input, resolve, reject });
      // Calls made in the same turn of the event loop (requests parsed from one poll) go together.
      if (!scheduled) {
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          drain();
        });
      }
    });
}
