import type { Readable } from 'node:stream';
import type { Store } from '../db/dialect.js';
import type { MediaStore } from '../media-store/media-store.js';
import { familyExists } from '../modules/families/queries.js';
import type { FamilyService } from '../modules/families/service.js';
import { exportArchive, type ExportProgress } from './exporter.js';
import { importArchive, type ImportOptions, type ImportReport } from './importer.js';

/** Export and import of archives (archive-format.ts), for the command line and the routes. */
export interface TransferService {
  /** The whole instance. */
  instanceArchive(progress?: (p: ExportProgress) => void): Readable;
  /** One family, every member's rows (the operator's), or undefined when there is no such family. */
  familyArchive(familyId: string, progress?: (p: ExportProgress) => void): Promise<Readable | undefined>;
  /**
   * The caller's family as the caller may read it (exporter.ts, familyFilters), a stub made on
   * first need, as `GET /user/family` does.
   */
  callerFamilyArchive(userId: string): Promise<{ familyId: string; archive: Readable }>;
  /** See importArchive: `open` gives a fresh stream of the archive for each of its two passes. */
  importArchive(open: () => Readable, opts: ImportOptions): Promise<ImportReport>;
}

export function createTransferService(store: Store, media: MediaStore, families?: Pick<FamilyService, 'ensureFamilyId'>): TransferService {
  return {
    instanceArchive: (progress) => exportArchive(store, media, { kind: 'instance' }, { progress }),
    async familyArchive(familyId, progress) {
      if (!(await familyExists(store.db, familyId))) return undefined;
      return exportArchive(store, media, { kind: 'family', familyId }, { progress });
    },
    async callerFamilyArchive(userId) {
      if (!families) throw new Error('the transfer service was made without the family service');
      const familyId = await families.ensureFamilyId(userId);
      return { familyId, archive: exportArchive(store, media, { kind: 'family', familyId }, { reader: userId }) };
    },
    importArchive: (open, opts) => importArchive(store, media, open, opts),
  };
}
