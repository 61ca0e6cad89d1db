// Package fakebuilder is the fake-client setup of real operators' unit
// tests: WithStatusSubresource for the operator's own kind, then a status
// write to a built-in Job (which keeps its status subresource), and the
// older WithRuntimeObjects and WithLists.
package fakebuilder

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MarkActive sets the Job's status.active through the status subresource.
func MarkActive(ctx context.Context, c client.Client, key client.ObjectKey, n int32) error {
	job := &batchv1.Job{}
	if err := c.Get(ctx, key, job); err != nil {
		return err
	}
	job.Status.Active = n
	return c.Status().Update(ctx, job)
}
