/**
 * In-process wake-ups for rollout event streams: the scheduler and the controls call notify()
 * after committing; streams also poll, so changes committed by another hub replica arrive too.
 */
export interface RolloutNotifier {
  notify(rolloutId: string): void;
  /** Calls `fn` on every notify of that rollout until the returned function is called. */
  subscribe(rolloutId: string, fn: () => void): () => void;
}

export function createRolloutNotifier(): RolloutNotifier {
  const listeners = new Map<string, Set<() => void>>();
  return {
    notify(id) {
      for (const fn of listeners.get(id) ?? []) fn();
    },
    subscribe(id, fn) {
      let set = listeners.get(id);
      if (!set) listeners.set(id, (set = new Set()));
      set.add(fn);
      return () => {
        set.delete(fn);
        if (set.size === 0) listeners.delete(id);
      };
    },
  };
}
