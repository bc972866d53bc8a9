// What the package carries for people: the manual pages (built into dist/man by npm run build; the
// packaging/deb/rigd.1 stand-in until then), README, CHANGELOG and docs/ under /usr/share/doc/rigd,
// the copyright file and the Debian changelog. Text over 4 KiB is gzip'd, as dh_compress does.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

/** Manual pages: [source in the tree, installed path], the first existing source of each. */
const MAN = [
  [['dist/man/rigd.1', 'packaging/deb/rigd.1'], 'usr/share/man/man1/rigd.1.gz'],
  [['dist/man/rigd.yaml.5'], 'usr/share/man/man5/rigd.yaml.5.gz'],
];
const DOCS = ['README.md', 'CHANGELOG.md', 'docs'];
const COMPRESS_OVER = 4096;
const TEXT = /\.(md|txt|ya?ml|json)$/i;

function gzip(data) {
  return gzipSync(data, { level: 9 });
}

function writeDoc(src, dest) {
  const data = readFileSync(src);
  mkdirSync(path.dirname(dest), { recursive: true });
  if (TEXT.test(src) && data.length > COMPRESS_OVER) writeFileSync(`${dest}.gz`, gzip(data));
  else writeFileSync(dest, data);
}

function copyDocs(src, dest) {
  if (statSync(src).isDirectory()) {
    for (const name of readdirSync(src)) if (!name.startsWith('.')) copyDocs(path.join(src, name), path.join(dest, name));
  } else writeDoc(src, dest);
}

/** Installs the manual pages and documentation into the stage; returns the manual pages installed. */
export function installDocs(root, stage, { pkg, version, maintainer, epoch }) {
  const pages = [];
  for (const [sources, target] of MAN) {
    const src = sources.map((s) => path.join(root, s)).find((s) => existsSync(s));
    if (!src) continue;
    mkdirSync(path.dirname(path.join(stage, target)), { recursive: true });
    writeFileSync(path.join(stage, target), gzip(readFileSync(src)));
    pages.push(`/${target}`);
  }

  const doc = path.join(stage, 'usr/share/doc/rigd');
  mkdirSync(doc, { recursive: true });
  for (const name of DOCS) if (existsSync(path.join(root, name))) copyDocs(path.join(root, name), path.join(doc, name));
  const year = new Date(epoch * 1000).getUTCFullYear();
  writeFileSync(
    path.join(doc, 'copyright'),
    `Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: rigd\nComment: The files under /usr/lib/rigd/node_modules carry their own licences (LICENSE files there);\n the Node.js runtime under /usr/lib/rigd/node carries its own (/usr/lib/rigd/node/LICENSE).\n\nFiles: *\nCopyright: ${year} the rigd authors\nLicense: ${pkg.license}\n All rights reserved.\n`,
  );
  const date = new Date(epoch * 1000).toUTCString().replace(/GMT$/, '+0000');
  const changelog = `rigd (${version}) unstable; urgency=medium\n\n  * rigd ${version.replace('~', '-')}.\n\n -- ${maintainer}  ${date}\n`;
  writeFileSync(path.join(doc, 'changelog.gz'), gzip(changelog));
  return pages;
}
