package stacks

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// References are programs that run like a Stack but are not compared as
// peers: they show what the hardware and the wire cost, so that a target
// missed against them can be shown to be physical. They are not in Names.
var References = map[string]Stack{
	"floor": Floor,
}

// Floor is the least a controller of ConfigMaps can do against the fake
// API server: one WatchList (watch with sendInitialEvents=true, protobuf)
// on a plain net/http client, each frame read and decoded with
// apimachinery's protobuf serializer (the decode client-go does: the
// WatchEvent, then the runtime.Unknown envelope and the ConfigMap), handed
// over one buffered channel to a single worker goroutine that calls
// observe. No cache, no queue, no deduplication, no retries; the
// connection is never re-established. workers is ignored.
func Floor(ctx context.Context, cfg *rest.Config, _ int, observe Observe) error {
	url := strings.TrimSuffix(cfg.Host, "/") + "/api/v1/configmaps?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("floor: %w", err)
	}
	req.Header.Set("Accept", runtime.ContentTypeProtobuf+";stream=watch")
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("floor: watch configmaps: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("floor: watch configmaps: %s", resp.Status)
	}

	ch := make(chan *corev1.ConfigMap, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for cm := range ch {
			observe(cm)
		}
	}()
	defer func() { close(ch); <-done }()

	dec := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	var (
		size [4]byte
		buf  []byte
		ev   metav1.WatchEvent
	)
	for {
		if _, err := io.ReadFull(r, size[:]); err != nil {
			return endOfWatch(ctx, err)
		}
		n := int(binary.BigEndian.Uint32(size[:]))
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return endOfWatch(ctx, err)
		}
		// Unmarshal copies what it keeps (strings and the raw object), so
		// buf is reused for the next frame.
		ev.Reset()
		if err := ev.Unmarshal(buf); err != nil {
			return fmt.Errorf("floor: decode watch event: %w", err)
		}
		switch watch.EventType(ev.Type) {
		case watch.Added, watch.Modified, watch.Deleted:
		case watch.Bookmark:
			continue
		default:
			return fmt.Errorf("floor: watch event of type %q", ev.Type)
		}
		cm := &corev1.ConfigMap{}
		if _, _, err := dec.Decode(ev.Object.Raw, nil, cm); err != nil {
			return fmt.Errorf("floor: decode %s event: %w", ev.Type, err)
		}
		select {
		case ch <- cm:
		case <-ctx.Done():
			return nil
		}
	}
}

// endOfWatch is nil when the watch ended because ctx did.
func endOfWatch(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("floor: the server closed the watch")
	}
	return fmt.Errorf("floor: read watch: %w", err)
}
