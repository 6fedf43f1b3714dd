/**
 * Where a use-case reports a status write it committed, so that the plane can announce
 * what the write changed (shared/domain/notification.ts). Told only after the API server
 * accepted the write; what it does with it never fails the write.
 */
import type { KubeObject } from '../domain/model/kube-object';

export interface StatusTransitions {
  /** `before`: the object the write was decided from; `after`: the object as the API server returned it. */
  committed(before: KubeObject, after: KubeObject): void;
}
