/**
 * Whether views may colour their output: no when NO_COLOR is set to anything but the empty string
 * (https://no-color.org). Views then render plain text with no escape codes at all, bold included.
 */
export function colourEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return !(typeof env.NO_COLOR === 'string' && env.NO_COLOR !== '');
}
