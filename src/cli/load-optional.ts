import { ConfigurationError } from '../canonical/errors.js';

/**
 * Loads a module that needs an optional peer dependency, and turns its absence into an error that
 * says what to install: `countersign` itself never needs these packages, only the commands that use them.
 */
export async function loadOptional<T>(pkg: string, purpose: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isMissing(error, pkg)) {
      throw new ConfigurationError(`${purpose} needs the "${pkg}" package: npm install ${pkg}`, {
        cause: error,
      });
    }
    throw error;
  }
}

function isMissing(error: unknown, pkg: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    error instanceof Error &&
    error.message.includes(`'${pkg}`)
  );
}
