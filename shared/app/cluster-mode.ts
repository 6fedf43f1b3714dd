/**
 * Where each function tells the two cluster modes apart (shared/domain/cluster-mode.ts says
 * what they mean): the standalone use-case or the delegate report, chosen once per hint.
 */
import type { ClusterMode } from '../domain/cluster-mode';

/** What a function does per mode: the one place where it tells them apart. */
export interface ModeUseCases<S, D = S> {
  standalone: () => Promise<S>;
  delegate: () => Promise<D>;
}

/** Runs the use-case of the cluster's mode. */
export function forClusterMode<S, D = S>(cluster: { mode: ClusterMode }, useCases: ModeUseCases<S, D>): Promise<S | D> {
  return cluster.mode === 'delegate' ? useCases.delegate() : useCases.standalone();
}
