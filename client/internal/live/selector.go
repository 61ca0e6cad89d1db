package live

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// invalidSelector is a labels.Selector that carries the error of an option
// that could not build a valid one. Readers check SelectorError and
// return the error instead of listing.
type invalidSelector struct{ err error }

var _ labels.Selector = invalidSelector{}

func (s invalidSelector) Matches(labels.Labels) bool                             { return false }
func (s invalidSelector) Empty() bool                                            { return false }
func (s invalidSelector) String() string                                         { return "<invalid: " + s.err.Error() + ">" }
func (s invalidSelector) Add(...labels.Requirement) labels.Selector              { return s }
func (s invalidSelector) Requirements() (labels.Requirements, bool)              { return nil, false }
func (s invalidSelector) DeepCopySelector() labels.Selector                      { return s }
func (s invalidSelector) RequiresExactMatch(string) (string, bool)               { return "", false }
func (s invalidSelector) HasRequirementForLabel(string, selection.Operator) bool { return false }

// InvalidSelector returns a selector that carries err, the error of an
// option that could not build a valid one.
func InvalidSelector(err error) labels.Selector { return invalidSelector{err: err} }

// SelectorError returns the error of a label selector built by an option
// from bad input (for example HasLabels with an invalid key), or nil when
// sel is nil or valid. Every Reader calls it before listing.
func SelectorError(sel labels.Selector) error {
	if s, ok := sel.(invalidSelector); ok {
		return s.err
	}
	return nil
}
