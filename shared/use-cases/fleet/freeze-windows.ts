/**
 * The operator's side of freeze windows: define, remove and list them, and override them
 * for one wave. The resync applies them when it advances a wave (advance-sync-wave.ts).
 */
import { ConflictError, InvalidInputError, NotFoundError } from '../../domain/errors';
import { createFreezeWindow, nextOpening, openOccurrence, type FreezeEffect, type FreezeWindow } from '../../domain/fleet/freeze-window';
import { overrideFreeze, type SyncWave } from '../../domain/fleet/sync-wave';
import type { Clock } from '../../ports/clock';
import type { FleetStore } from '../../ports/store';

/** Overrides longer than this are refused: the reason is read in an incident review. */
export const MAX_OVERRIDE_REASON = 500;
const OVERRIDE_ATTEMPTS = 3;

export interface DefineFreezeWindowInput {
  name: string;
  effect: FreezeEffect;
  schedule: string;
  duration: string;
  selector?: string;
}

/** Creates or replaces the window of that name; InvalidInputError for a bad schedule, duration, name or selector. */
export async function defineFreezeWindow(deps: { fleet: FleetStore; clock: Clock }, input: DefineFreezeWindowInput): Promise<FreezeWindow> {
  const window = createFreezeWindow({ ...input, now: deps.clock.now() });
  await deps.fleet.putFreezeWindow(window);
  return window;
}

/** Removes a window; NotFoundError when there is none of that name. */
export async function removeFreezeWindow(fleet: FleetStore, name: string): Promise<void> {
  if (!(await fleet.deleteFreezeWindow(name))) throw new NotFoundError(`freeze window ${name} not found`);
}

export interface WindowNow {
  window: FreezeWindow;
  /** Its opening that contains now, if it is open. */
  open?: { start: number; end: number };
  /** When it next opens (within about eight days), if it is closed. */
  next?: number;
}

/** Every window, by name, with whether it is open now. */
export async function listFreezeWindows(deps: { fleet: FleetStore; clock: Clock }): Promise<WindowNow[]> {
  const now = deps.clock.now();
  return (await deps.fleet.listFreezeWindows()).map((window) => {
    const open = openOccurrence(window, now);
    if (open) return { window, open };
    const next = nextOpening(window, now);
    return { window, ...(next === undefined ? {} : { next }) };
  });
}

/**
 * Records an operator's override on a running wave: from the next run on it starts its
 * clusters whatever the freeze windows say. The write is conditional on the version read
 * (a resync taking a step meanwhile is read again).
 */
export async function overrideWaveFreeze(deps: { fleet: FleetStore; clock: Clock }, waveId: string, reason: string, by?: string): Promise<SyncWave> {
  const text = reason.trim();
  if (text === '') throw new InvalidInputError('an override needs a reason (--reason), kept on the wave for the record');
  if (text.length > MAX_OVERRIDE_REASON) throw new InvalidInputError(`the reason may be at most ${MAX_OVERRIDE_REASON} characters; this one has ${text.length}`);
  for (let attempt = 1; ; attempt += 1) {
    const wave = await deps.fleet.getWave(waveId);
    if (!wave) throw new NotFoundError(`sync wave ${waveId} not found`);
    if (wave.state !== 'Running') throw new InvalidInputError(`sync wave ${waveId} is ${wave.state}: only a running wave can be overridden`);
    try {
      return await deps.fleet.saveWave(overrideFreeze(wave, text, by, deps.clock.now()));
    } catch (error) {
      if (!(error instanceof ConflictError) || attempt >= OVERRIDE_ATTEMPTS) throw error;
    }
  }
}
