// Package controllerutil holds helpers that reconcilers call on objects:
// owner references, create-or-update, create-or-patch and finalizers. The
// names and signatures are controller-runtime's.
//
// Guarantees:
//   - SetControllerReference refuses a second controller
//     (AlreadyOwnedError), cross-namespace owners and namespaced owners of
//     cluster-scoped objects, with an error naming both objects.
//   - CreateOrUpdate and CreateOrPatch write only when the mutate function
//     changed something, and say what they did (OperationResult); the
//     mutate function may not change the object's name or namespace.
//   - CreateOrPatch patches the object and its status separately, so a
//     status change goes through the status subresource.
//   - AddFinalizer and RemoveFinalizer report whether they changed the
//     object, so the caller knows whether an Update is needed.
package controllerutil
