// Package composite runs several multicluster.Providers as one, each
// one's cluster names prefixed so that they cannot collide.
//
//	p, err := composite.New(
//		composite.Member{Prefix: "capi", Provider: capiProvider},     // "capi/fleet/eu-1"
//		composite.Member{Prefix: "static", Provider: fileProvider},  // "static/edge-7"
//	)
//
// Guarantees:
//   - A member's cluster "n" is engaged as "<prefix>/n"; the engagement's
//     context is the member's own, so it ends when the member ends it.
//     A member's Engage of an invalid name (see
//     multicluster.ValidateName) fails with an error naming the member,
//     and nothing is engaged.
//   - Prefixes are validated by New: non-empty, valid cluster names, no
//     "/" (so "<prefix>/" starts every name of one member and no other),
//     unique.
//   - Run runs every member until ctx ends and returns nil then. When a
//     member's Run returns an error, Run cancels the others' context,
//     waits for all of them to return, and returns that error (joined
//     with any other member's), naming the member's prefix. A member
//     whose Run returns nil early is done; the others go on.
package composite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/multicluster"
)

// Member is one provider of a composite and the prefix of its cluster
// names.
type Member struct {
	// Prefix goes before the member's cluster names, with a "/".
	Prefix string
	// Provider discovers the member's clusters.
	Provider multicluster.Provider
}

// Provider runs its members as one; see the package doc.
type Provider struct {
	members []Member
}

var _ multicluster.Provider = (*Provider)(nil)

// New returns a Provider of members. It fails, naming every problem, when
// there are none, a Provider is nil, or a prefix is invalid or repeated.
func New(members ...Member) (*Provider, error) {
	var errs []error
	if len(members) == 0 {
		errs = append(errs, errors.New("composite: no members"))
	}
	seen := map[string]bool{}
	for i, m := range members {
		at := fmt.Sprintf("composite: member %d (prefix %q)", i, m.Prefix)
		if m.Provider == nil {
			errs = append(errs, fmt.Errorf("%s has no Provider", at))
		}
		switch {
		case m.Prefix == "":
			errs = append(errs, fmt.Errorf("%s: the prefix is empty", at))
		case strings.Contains(m.Prefix, "/"):
			errs = append(errs, fmt.Errorf("%s: the prefix holds a /", at))
		case seen[m.Prefix]:
			errs = append(errs, fmt.Errorf("%s: the prefix is used twice", at))
		default:
			if err := multicluster.ValidateName(m.Prefix); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", at, err))
			}
		}
		seen[m.Prefix] = true
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Provider{members: append([]Member(nil), members...)}, nil
}

// Run runs every member with a Sink that prefixes its names, until ctx
// ends or a member fails.
func (p *Provider) Run(ctx context.Context, s multicluster.Sink) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for _, m := range p.members {
		wg.Go(func() {
			if err := m.Provider.Run(ctx, prefixed{sink: s, prefix: m.Prefix}); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("composite: provider %q: %w", m.Prefix, err))
				mu.Unlock()
				cancel()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// prefixed is the Sink one member sees.
type prefixed struct {
	sink   multicluster.Sink
	prefix string
}

// Engage engages "<prefix>/name".
func (p prefixed) Engage(ctx context.Context, name string, cfg *rest.Config) error {
	if err := multicluster.ValidateName(name); err != nil {
		return fmt.Errorf("composite: provider %q: %w", p.prefix, err)
	}
	return p.sink.Engage(ctx, p.prefix+"/"+name, cfg)
}
