package log_test

import (
	"context"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/log"
)

var (
	_ rest.WarningHandler            = (*log.KubeAPIWarningLogger)(nil)
	_ rest.WarningHandlerWithContext = (*log.KubeAPIWarningLogger)(nil)
)

func TestKubeAPIWarningLogger(t *testing.T) {
	for _, tt := range []struct {
		name string
		give log.KubeAPIWarningLoggerOptions
		want []string
	}{
		{name: "every warning", want: []string{"deprecated", "deprecated", "other"}},
		{name: "deduplicated", give: log.KubeAPIWarningLoggerOptions{Deduplicate: true}, want: []string{"deprecated", "other"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			sink := funcr.New(func(prefix, args string) { got = append(got, prefix+" "+args) }, funcr.Options{})
			ctx := log.IntoContext(context.Background(), sink.WithName("suite"))
			l := log.NewKubeAPIWarningLogger(tt.give)
			for _, w := range []struct {
				code int
				msg  string
			}{{299, "deprecated"}, {299, "deprecated"}, {200, "not a warning"}, {299, ""}, {299, "other"}} {
				l.HandleWarningHeaderWithContext(ctx, w.code, "agent", w.msg)
			}
			var want []string
			for _, m := range tt.want {
				want = append(want, `suite "level"=0 "msg"="`+m+`"`)
			}
			assert.Equal(t, want, got)
		})
	}
}
