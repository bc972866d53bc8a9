/**
 * JSON lines for journald and log shippers; pino-pretty's coloured text for a person at a terminal.
 * `auto` picks pretty only when stdout is a terminal; `--log-format` or `log.format` force either.
 */
export type LogFormatSetting = 'auto' | 'json' | 'pretty';
export type LogFormat = 'json' | 'pretty';

export const LOG_FORMATS: readonly LogFormatSetting[] = ['auto', 'json', 'pretty'];

export function chooseLogFormat(setting: LogFormatSetting | undefined, stdoutIsTty: boolean): LogFormat {
  if (setting === 'json' || setting === 'pretty') return setting;
  return stdoutIsTty ? 'pretty' : 'json';
}
