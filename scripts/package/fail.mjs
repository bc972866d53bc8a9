// A reason the package cannot be built: scripts/package.mjs prints it as one line on stderr and
// exits 1 (the staging directory is removed).
export class PackageError extends Error {}

export function fail(message) {
  throw new PackageError(message);
}
