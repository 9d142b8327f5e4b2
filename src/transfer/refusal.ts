/** The archive cannot be imported as it is (damaged, of a newer format, a bad row): nothing was written. */
export class ArchiveRefused extends Error {}

export const refuse = (message: string): never => {
  throw new ArchiveRefused(message);
};
