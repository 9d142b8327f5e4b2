/**
 * The rule behind `PUT /admin/families/{id}` for both of its lists (members and devices): the
 * body's list becomes the family's, in its order. An entry the family holds and the list leaves
 * out leaves the family; one it holds and lists stays, at its new position; one listed that is
 * elsewhere (another family, or nowhere) moves in. Each step is the caller's to carry out, so
 * members and devices share the rule and differ only in their rows.
 */
export interface ListReconciler<Row> {
  /** The entries the family holds now. */
  present: readonly Row[];
  idOf(row: Row): string;
  /** Where an id is now, in any family; undefined when nowhere. */
  find(id: string): Promise<Row | undefined>;
  /** Whether a found entry already counts as this family's (it then stays). */
  isHere(row: Row): boolean;
  leave(row: Row): Promise<void>;
  stay(row: Row, position: number): Promise<void>;
  /** `previous` is where it was (to take it out of there), undefined when it was nowhere. */
  moveIn(id: string, position: number, previous: Row | undefined): Promise<void>;
}

/** Applies the rule to the ids listed, in order (listed ids are distinct: the caller checks). */
export async function reconcileList<Row>(wanted: readonly string[], steps: ListReconciler<Row>): Promise<void> {
  const listed = new Set(wanted);
  for (const row of steps.present) {
    if (!listed.has(steps.idOf(row))) await steps.leave(row);
  }
  for (const [position, id] of wanted.entries()) {
    const current = await steps.find(id);
    if (current && steps.isHere(current)) await steps.stay(current, position);
    else await steps.moveIn(id, position, current);
  }
}
