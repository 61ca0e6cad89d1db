// Package app is the App operator: for each App it keeps a Deployment and a
// Service in line with the App's spec, reports the Deployment's readiness
// in the App's status, and cleans up through a finalizer when the App is
// deleted. It is the seed's flow end to end: cache events -> queue ->
// Reconcile -> cached reads -> writes to the API server -> new events.
package app
