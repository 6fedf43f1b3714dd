/**
 * Where a watched stream may be checkpointed. Observations enter in stream order; one
 * that became a hint holds the position until its publish settles (published or
 * deliberately skipped), one that needs no hint (a bookmark, a dropped change, the end
 * of a relist) passes at once. The checkpoint is the resourceVersion of the last
 * observation with nothing unsettled before it, so a restart from it replays every hint
 * that might not have reached the bus, and nothing older.
 *
 * A position a published hint moved is worth saving soon: a restart from before it
 * publishes the hint again (harmless, but an invocation). One only observations without a
 * hint moved can wait while the forwarder runs. One only bookmarks moved can wait longer,
 * even past the end of a run: a restart from before it replays nothing at all (replayed
 * events are hints again, as a restarted forwarder remembers no earlier copy).
 */
export interface PositionTicket {
  readonly resourceVersion: string | undefined;
  done: boolean;
  /** Held for a hint's publish (not a pass queued behind one). */
  readonly hinted: boolean;
  /** A watch bookmark's pass: moves the position, stands for no object. */
  readonly bookmark?: boolean;
  /** When the change it stands for was made (epoch ms), for the lag metric. */
  readonly changedAt?: number;
}

export class StreamPosition {
  private readonly queue: PositionTicket[] = [];
  private committable: string | undefined;
  private saved: string | undefined;
  /** Whether a settled hint moved the committable position since the last save. */
  private hintedSinceSave = false;
  private hintAwaitingPosition = false;
  /** Whether an object's observation (not only bookmarks) moved the committable position since the last save. */
  private eventSinceSave = false;
  private eventAwaitingPosition = false;

  constructor(checkpoint?: string) {
    this.committable = checkpoint;
    this.saved = checkpoint;
  }

  /** An observation that needs no publish (or a bookmark); undefined keeps the position where it is. */
  pass(resourceVersion: string | undefined, options: { bookmark?: boolean } = {}): void {
    const bookmark = options.bookmark === true;
    if (this.queue.length === 0) {
      if (!bookmark) this.eventAwaitingPosition = true;
      if (resourceVersion !== undefined) this.moveTo(resourceVersion);
      return;
    }
    this.queue.push({ resourceVersion, done: true, hinted: false, ...(bookmark ? { bookmark } : {}) });
  }

  /** An observation waiting for its publish. */
  hold(resourceVersion: string | undefined, changedAt?: number): PositionTicket {
    const ticket: PositionTicket = { resourceVersion, done: false, hinted: true, ...(changedAt === undefined ? {} : { changedAt }) };
    this.queue.push(ticket);
    return ticket;
  }

  settle(ticket: PositionTicket): void {
    ticket.done = true;
    while (this.queue[0]?.done) {
      const head = this.queue.shift();
      // A relist's hints carry no position: they count towards the list's, which follows them.
      if (head?.hinted) this.hintAwaitingPosition = true;
      if (head?.bookmark !== true) this.eventAwaitingPosition = true;
      if (head?.resourceVersion !== undefined) this.moveTo(head.resourceVersion);
    }
  }

  private moveTo(resourceVersion: string): void {
    this.committable = resourceVersion;
    if (this.hintAwaitingPosition) this.hintedSinceSave = true;
    if (this.eventAwaitingPosition) this.eventSinceSave = true;
    this.hintAwaitingPosition = false;
    this.eventAwaitingPosition = false;
  }

  /** Observations still waiting for their publish. */
  get unsettled(): number {
    return this.queue.filter((ticket) => !ticket.done).length;
  }

  /** When the oldest change still waiting for its publish was made; undefined when none waits. */
  get oldestUnsettledChangedAt(): number | undefined {
    let oldest: number | undefined;
    for (const ticket of this.queue) {
      if (ticket.done || ticket.changedAt === undefined) continue;
      if (oldest === undefined || ticket.changedAt < oldest) oldest = ticket.changedAt;
    }
    return oldest;
  }

  /** The resourceVersion a checkpoint would hold now, moved or not; undefined before the first list. */
  get checkpoint(): string | undefined {
    return this.committable;
  }

  /** The resourceVersion to save, when it moved since the last save. */
  get unsaved(): string | undefined {
    return this.committable !== this.saved ? this.committable : undefined;
  }

  /** Whether the stream has a position and none was ever saved (nor loaded). */
  get neverSaved(): boolean {
    return this.saved === undefined && this.committable !== undefined;
  }

  /** Whether the position to save holds a published hint (see the class comment). */
  get unsavedHint(): boolean {
    return this.hintedSinceSave && this.unsaved !== undefined;
  }

  /** Whether the position to save holds an object's observation, not only bookmarks. */
  get unsavedEvent(): boolean {
    return this.eventSinceSave && this.unsaved !== undefined;
  }

  markSaved(resourceVersion: string): void {
    this.saved = resourceVersion;
    if (this.committable !== resourceVersion) return;
    this.hintedSinceSave = false;
    this.eventSinceSave = false;
  }
}
