// Group commit for one hot statement: calls that arrive while earlier ones are still in the
// database wait, and go together as one statement, so one commit (one WAL flush, one round trip)
// serves many requests. Under load the database spends most of a small insert's time committing;
// alone, a call goes at once and waits for nothing but the batches already in flight.
//
// Each call's writes stay atomic: a batch is one statement, hence one transaction, that holds every
// call's rows whole. A batch holds one group's calls only (the caller groups by account, so that a
// statement stays within one tenant, as a distributed database routes it). A batch that fails is
// not one call's failure to hand to all: its calls go again, each as a batch of its own, within the
// same limit of batches in flight, so that each gets its own answer or its own error — unless the
// error is no call's own (an outage, an overloaded server), which every call gets at once.
export interface CoalesceOptions<I, O> {
  /** Runs a batch; answers one output per input, in order. */
  run(batch: I[]): Promise<O[]>;
  /**
   * Calls with one key never share a batch, nor wait in the queue together (a statement cannot
   * see its own rows' conflicts as a later one would): a call waits until the earlier call with
   * its key has its answer.
   */
  key(input: I): string;
  /** Only calls of one group share a batch. */
  group(input: I): string;
  /** Batches in the database at once; more calls wait and join the next. */
  maxInFlight: number;
  /** Inputs per batch at most. */
  maxBatch: number;
  /** An error that would be every call's alone too: handed to all at once. */
  everyones?(err: unknown): boolean;
}

interface Waiting<I, O> {
  input: I;
  group: string;
  /** Sent again after its batch failed: goes in a batch of its own. */
  alone: boolean;
  resolve(output: O): void;
  reject(err: unknown): void;
}

export function coalesce<I, O>(opts: CoalesceOptions<I, O>): (input: I) => Promise<O> {
  const queue: Waiting<I, O>[] = [];
  /** The latest call of each key still without its answer. */
  const pending = new Map<string, Promise<unknown>>();
  let inFlight = 0;
  let scheduled = false;

  const launch = async (batch: Waiting<I, O>[]) => {
    inFlight++;
    try {
      let outputs: O[];
      try {
        outputs = await opts.run(batch.map((w) => w.input));
      } catch (err) {
        if (batch.length === 1 || opts.everyones?.(err)) batch.forEach((w) => w.reject(err));
        else queue.unshift(...batch.map((w) => ({ ...w, alone: true })));
        return;
      }
      batch.forEach((w, i) => w.resolve(outputs[i]!));
    } finally {
      inFlight--;
      drain();
    }
  };

  function nextBatch(): Waiting<I, O>[] {
    const first = queue.shift()!;
    if (first.alone) return [first];
    const batch = [first];
    for (let i = 0; i < queue.length && batch.length < opts.maxBatch; ) {
      const w = queue[i]!;
      if (w.alone || w.group !== first.group) i++;
      else batch.push(queue.splice(i, 1)[0]!);
    }
    return batch;
  }

  function drain(): void {
    while (inFlight < opts.maxInFlight && queue.length > 0) void launch(nextBatch());
  }

  const enqueue = (input: I) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ input, group: opts.group(input), alone: false, resolve, reject });
      // Calls made in the same turn of the event loop (requests parsed from one poll) go together.
      if (!scheduled) {
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          drain();
        });
      }
    });

  return (input) => {
    const key = opts.key(input);
    const earlier = pending.get(key);
    const answer = earlier ? earlier.then(ignore, ignore).then(() => enqueue(input)) : enqueue(input);
    pending.set(key, answer);
    const forget = () => {
      if (pending.get(key) === answer) pending.delete(key);
    };
    answer.then(forget, forget);
    return answer;
  };
}

const ignore = () => undefined;
