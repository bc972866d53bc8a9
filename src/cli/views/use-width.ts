import { useEffect, useState } from 'react';
import { useStdout } from 'ink';

/**
 * The terminal's width in cells, re-rendering the view when the terminal is resized (Ink then
 * redraws the whole frame, clearing it first when the terminal got narrower).
 */
export function useTerminalWidth(): number {
  const { stdout } = useStdout();
  const [, setResizes] = useState(0);
  useEffect(() => {
    const onResize = () => setResizes((n) => n + 1);
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);
  return stdout.columns || 80;
}

/** The terminal's height in lines, or undefined when the output is no terminal (tests, pipes). */
export function useTerminalRows(): number | undefined {
  const { stdout } = useStdout();
  return stdout.rows || undefined;
}
