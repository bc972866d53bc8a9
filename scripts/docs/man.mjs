// Man pages in roff (man(7) macros): rigd(1) from the commander program, rigd.yaml(5) from the
// config reference.

/** Text for roff: backslashes escaped, hyphens as minus signs, no line starting with a dot or quote. */
export function roff(text) {
  return String(text)
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .split('\n')
    .map((l) => (/^[.']/.test(l) ? `\\&${l}` : l))
    .join('\n');
}

function header(name, section, date, version, title) {
  return [`.TH ${name.toUpperCase()} ${section} "${date}" "rigd ${version}" "${title}"`];
}

function commandPath(cmd) {
  const names = [];
  for (let c = cmd; c; c = c.parent) names.unshift(c.name());
  return names;
}

function usage(cmd) {
  const args = (cmd.registeredArguments ?? []).map((a) => (a.required ? `<${a.name()}>` : `[${a.name()}]`));
  return [...commandPath(cmd), ...(cmd.options.length ? ['[options]'] : []), ...args].join(' ');
}

/** Every command of the program, depth first, parents before their subcommands. */
export function allCommands(program) {
  const out = [];
  const walk = (cmd) => {
    for (const c of cmd.commands) {
      out.push(c);
      walk(c);
    }
  };
  walk(program);
  return out;
}

function options(cmd) {
  const lines = [];
  for (const o of cmd.options) {
    lines.push('.TP', `.B ${roff(o.flags)}`);
    const dflt = o.defaultValue !== undefined && o.defaultValue !== false ? ` (default: ${o.defaultValue})` : '';
    lines.push(roff(`${o.description}${dflt}`));
  }
  return lines;
}

/** rigd(1) */
export function rigdManPage(program, { version, date }) {
  const lines = [
    ...header('rigd', 1, date, version, 'rigd manual'),
    '.SH NAME',
    `rigd \\- ${roff(program.description())}`,
    '.SH SYNOPSIS',
    '.B rigd',
    '[\\fB\\-\\-config\\fR \\fIfile\\fR] \\fIcommand\\fR [\\fIoptions\\fR]',
    '.SH DESCRIPTION',
    roff('rigd runs on a VPN gateway and manages a fleet of field capture devices (rigs): rig reports, signed uploads, capture ingestion, and the operator tools. "rigd serve" is what systemd runs; every other command is the operator\'s tool on the same box, and works on the same database while rigd serve runs.'),
    '.PP',
    roff('With --json a command prints JSON only on standard output. Errors are one line on standard error.'),
    '.SH GLOBAL OPTIONS',
    ...options(program),
    '.TP',
    '.B \\-h, \\-\\-help',
    'display help for rigd or a command',
    '.SH COMMANDS',
  ];
  for (const cmd of allCommands(program)) {
    lines.push(`.SS ${roff(commandPath(cmd).slice(1).join(' '))}`);
    lines.push(`.B ${roff(usage(cmd))}`, '.br', roff(cmd.description()));
    for (const a of cmd.registeredArguments ?? []) {
      if (a.description) lines.push('.TP', `.I ${roff(a.name())}`, roff(a.description));
    }
    lines.push(...options(cmd));
  }
  lines.push(
    '.SH EXIT STATUS',
    '0 success; 1 failure; 2 usage error or a bad config.',
    '.SH ENVIRONMENT',
    '.TP',
    '.B RIGD_CONFIG',
    'the config file, when \\-\\-config is not given',
    '.TP',
    '.B RIGD_<SECTION>_<KEY>',
    roff('overrides a config key, e.g. RIGD_SERVER_PORT; see rigd.yaml(5)'),
    '.TP',
    '.B RIGD_ENV_FILE',
    roff('the environment file read by every command (default /etc/rigd/rigd.env; empty: none)'),
    '.SH FILES',
    '.TP',
    '.I /etc/rigd/config.yaml',
    'the config file',
    '.TP',
    '.I /etc/rigd/rigd.env',
    roff('secrets, as RIGD_* variables (mode 0600)'),
    '.TP',
    '.I /var/lib/rigd',
    roff('data_dir of the service: the database, the capture store, objects of the embedded store'),
    '.SH SEE ALSO',
    '.BR rigd.yaml (5),',
    '.BR systemctl (1),',
    '.BR journalctl (1)',
    '',
  );
  return lines.join('\n');
}

/** rigd.yaml(5) */
export function configManPage(keys, { version, date }) {
  const lines = [
    ...header('rigd.yaml', 5, date, version, 'rigd manual'),
    '.SH NAME',
    'rigd.yaml \\- rigd configuration file',
    '.SH SYNOPSIS',
    '.I /etc/rigd/config.yaml',
    '.SH DESCRIPTION',
    roff('YAML. Every key is optional; the default applies when it is not set. Lookup: --config FILE, else $RIGD_CONFIG, else /etc/rigd/config.yaml, else the defaults. Each key can be set from the environment as RIGD_<SECTION>_<KEY> (lists comma-separated); the environment wins over the file. Every value is checked when any command starts: a wrong one stops it with one line naming the key, exit 2.'),
  ];
  let section = null;
  for (const k of keys) {
    if (k.section !== section) {
      section = k.section;
      lines.push(`.SH ${roff(section.toUpperCase())}`);
    }
    lines.push('.TP', `.B ${roff(k.key)}`);
    lines.push(roff(`${k.type}; default ${k.default === '' ? 'none' : k.default}; environment ${k.env}.`));
    if (k.description) lines.push('.br', roff(k.description));
  }
  lines.push('.SH SEE ALSO', '.BR rigd (1)', '');
  return lines.join('\n');
}
