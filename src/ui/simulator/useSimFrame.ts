import { useEffect, useState } from 'react';

/** Re-renders at about `hz` while `active`, on requestAnimationFrame (the panes poll the shared buffers). */
export function useSimFrame(active: boolean, hz = 15): number {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (!active) return;
    let raf = 0;
    let last = 0;
    const loop = (t: number) => {
      if (t - last >= 1000 / hz) {
        last = t;
        setTick((x) => x + 1);
      }
      raf = requestAnimationFrame(loop);
    };
    raf = requestAnimationFrame(loop);
    return () => cancelAnimationFrame(raf);
  }, [active, hz]);
  return tick;
}
