/**
 * What a command needs from the world, passed in so tests can supply fakes and string
 * buffers: a narrow cluster client, the three streams, the clock, ids and sleep.
 */
import type { ClusterClient } from '../shared/ports/cluster';

/** The only cluster calls the plugin makes: it reads, and its actions send one JSON Patch. */
export type CliClusterClient = Pick<ClusterClient, 'get' | 'list' | 'patch'>;

export interface TextSink {
  write(text: string): unknown;
  /** True when the stream is a terminal (progress lines go only there). */
  isTTY?: boolean;
}

export interface PromptInput {
  /** True when stdin is a terminal; the confirmation prompt needs one. */
  isTTY: boolean;
  /** Resolves with one line without its newline, or null at end of input. */
  readLine(): Promise<string | null>;
}

export interface CliIO {
  stdout: TextSink;
  stderr: TextSink;
  stdin: PromptInput;
}

export interface CommandEnv {
  client: CliClusterClient;
  io: CliIO;
  /** The kubeconfig context in use, shown in previews and follow-up commands. */
  contextName: string;
  now(): Date;
  /** A random (v4) UUID. */
  newRequestId(): string;
  sleep(ms: number): Promise<void>;
  /** Upper bound for each API request in ms; 0 means none of the user's own. */
  requestTimeoutMs: number;
}

/** Raised when a time limit runs out; the guarded flow decides what that means. */
export class DeadlineExceededError extends Error {
  constructor() {
    super('context deadline exceeded');
    this.name = 'DeadlineExceededError';
  }
}

/** Races `work` against a timer; the timer never keeps the process alive. */
export async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  if (!Number.isFinite(ms) || ms <= 0) return work;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceededError()), ms);
    timer.unref?.();
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/** A point in time after which the command gives up, shared by every step of one command. */
export class Deadline {
  private readonly endsAt: number;

  constructor(
    private readonly now: () => Date,
    budgetMs: number,
  ) {
    this.endsAt = now().getTime() + budgetMs;
  }

  remainingMs(): number {
    return Math.max(0, this.endsAt - this.now().getTime());
  }

  /** Runs one API request within both the remaining budget and the per-request cap. */
  async run<T>(work: () => Promise<T>, requestCapMs: number): Promise<T> {
    const remaining = this.remainingMs();
    if (remaining <= 0) throw new DeadlineExceededError();
    const cap = requestCapMs > 0 ? Math.min(requestCapMs, remaining) : remaining;
    return withTimeout(work(), cap);
  }
}
