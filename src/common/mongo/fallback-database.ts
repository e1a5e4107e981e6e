import { KeyedLock } from './keyed-lock';

/**
 * Workarounds for FerretDB v1 with its SQLite handler, the embedded database that development
 * and tests fall back to where no MongoDB server can be had. They are harmless on MongoDB and
 * kept here, in one place, so that production code elsewhere speaks plain MongoDB. (How FerretDB
 * reports a unique violation is recognised with the other driver errors, in
 * src/common/errors/mongo-errors.ts.)
 */

/**
 * Serialises read-check-write sequences per key within this process. On MongoDB a conditional
 * update (filter on the revision read) is enough by itself; FerretDB does not re-check an
 * update's filter at write time, so two concurrent conditional updates can both apply. Queuing
 * them per key makes one instance exact on FerretDB too; several instances on one FerretDB can
 * still lose an update (docs/database.md lists this among FerretDB's limits).
 */
export class FallbackWriteQueue extends KeyedLock {}
