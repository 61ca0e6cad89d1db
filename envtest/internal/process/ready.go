package process

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// WaitContext bounds one process's readiness wait by its own start
// timeout d, when it has one (d > 0).
func WaitContext(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return context.WithCancel(ctx)
}

// HTTPReady returns a check for WaitReady that GETs url and wants status
// 200 and a body containing want.
func HTTPReady(c *http.Client, url, want string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s: %s", url, resp.Status, body)
		}
		if want != "" && !strings.Contains(string(body), want) {
			return fmt.Errorf("%s: unexpected answer %q", url, body)
		}
		return nil
	}
}
