/**
 * A dependency check with a deadline. A frozen server answers nothing, so a check must give up
 * on its own; and it must not pile up attempts while the server stays frozen (each Postgres
 * attempt holds a pool connection): at most one attempt runs at a time, and callers that come
 * while it runs wait for it, each with their own deadline.
 */
export type Probe = () => Promise<boolean>;

export function createProbe(attempt: () => Promise<unknown>, timeoutMs: number): Probe {
  let running: Promise<unknown> | undefined;
  return async () => {
    if (!running) {
      const p = attempt();
      running = p;
      const clear = (): void => {
        if (running === p) running = undefined;
      };
      p.then(clear, clear);
    }
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await Promise.race([running.then(() => true as const), deadline]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  };
}
