// Package config holds settings shared by every controller of a manager:
// manager.Options.Controller is a Controller, and each controller the
// manager builds (controller.New, controller/builder) takes its fields as
// defaults for the controller.Options it leaves unset.
//
// It is controller-runtime's pkg/config with the same field names, so that
// ported code compiles after an import-path rewrite.
//
// Guarantees:
//   - The zero Controller changes nothing: every controller keeps the
//     defaults of controller.Options.
//   - A field set in a controller's own controller.Options (the builder's
//     WithOptions) wins over the manager's Controller.
//   - The manager rejects negative durations and counts with an error
//     naming the field.
package config
