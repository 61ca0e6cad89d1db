// Package fieldowner is the fake client's simplified server-side apply:
// it remembers which field manager owns each field of each object and
// merges apply configurations under the API server's ownership rules.
//
// A field is a path of map keys; lists and scalars are whole fields.
// Guarantees:
//   - Every write gives its manager the fields it changed (Table.Wrote);
//     a field that no longer exists has no owner.
//   - An apply that changes a field another manager owns fails with a 409
//     conflict naming every such field, unless forced.
//   - Fields a manager applied before and leaves out of its next apply are
//     removed from the object.
//   - Owners of the object and of its status subresource are kept apart:
//     an apply of one never removes the fields a manager applied to the
//     other.
//   - An empty map in a configuration names the map, not its contents: it
//     neither clears the fields others set inside it nor, left out later,
//     removes the fields its manager has since applied inside it.
//   - Server-owned metadata (all but labels, annotations, finalizers and
//     ownerReferences) has no owner.
//   - A Table is not safe for concurrent use; the fake guards it with its
//     store's lock.
package fieldowner
