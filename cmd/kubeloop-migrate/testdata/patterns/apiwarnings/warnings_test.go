package apiwarnings

import (
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/rest"
)

var _ rest.WarningHandler = (*Handler)(nil)

func TestWarningsAreLoggedOnce(t *testing.T) {
	var (
		mu    sync.Mutex
		lines []string
	)
	h := NewHandler(funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, prefix+" "+args)
	}, funcr.Options{}).WithName("warning"))
	h.HandleWarningHeader(299, "", "example.com/v1beta1 Widget is deprecated")
	h.HandleWarningHeader(299, "", "example.com/v1beta1 Widget is deprecated")
	h.HandleWarningHeader(200, "", "not a warning")

	if got := len(h.Seen()); got != 2 {
		t.Fatalf("handled %d warnings, want 2", got)
	}
	mu.Lock()
	defer mu.Unlock()
	logged := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "warning ") && strings.Contains(l, "Widget is deprecated") {
			logged++
		}
	}
	if logged != 1 {
		t.Fatalf("logged the warning %d times, want once: %q", logged, lines)
	}
}
