package fake

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/client"
)

// Apply is a simplified server-side apply of the status subresource (see
// Client.Apply): the configuration's status fields are owned by the field
// manager, apart from the fields it applied to the object itself; other
// fields of the configuration are ignored. The object must exist. Other
// subresources answer NotFound, "scale" ErrNotSupported.
func (s *subResourceClient) Apply(_ context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	verb := s.verb("apply")
	at, err := client.ApplyTargetOf(obj)
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	o := (&client.SubResourceApplyOptions{}).ApplyOpts(opts)
	if o.FieldManager == "" {
		return opError(verb, at.GVK, at.Namespace, at.Name, fmt.Errorf("a field owner is required (client.FieldOwner or Options.FieldOwner)"))
	}
	if at.Namespace == "" && s.c.kinds.Namespaced(at.GVK, "") {
		return opError(verb, at.GVK, at.Namespace, at.Name, client.ErrNamespaceRequired)
	}
	switch {
	case s.name == "scale":
		return opError(verb, at.GVK, at.Namespace, at.Name, fmt.Errorf("apply of the scale subresource: %w by the fake client", client.ErrNotSupported))
	case s.name != "status" || !s.c.kinds.HasStatus(at.GVK.GroupKind()):
		return opError(verb, at.GVK, at.Namespace, at.Name, s.notFound(at.GVK, at.Name))
	}
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	result, err := s.c.applyData(at.GVK, at.Data, o.FieldManager, o.Force != nil && *o.Force, len(o.DryRun) > 0, true)
	if err != nil {
		return opError(verb, at.GVK, at.Namespace, at.Name, err)
	}
	data, err := json.Marshal(result)
	if err != nil {
		return opError(verb, at.GVK, at.Namespace, at.Name, err)
	}
	return opError(verb, at.GVK, at.Namespace, at.Name, json.Unmarshal(data, obj))
}
