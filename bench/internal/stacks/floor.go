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

	"github.com/kubeloop/kubeloop/internal/probe"
)

// References are programs that run like a Stack but are not compared as
// peers: they show what the hardware and the wire cost, so that a target
// missed against them can be shown to be physical. They are not in Names.
var References = map[string]Stack{
	"floor":       Floor,
	"wire":        Wire,
	"wire-worker": WireWorker,
}

// Lookup returns the stack or reference of that name.
func Lookup(name string) (Stack, bool) {
	if st, ok := Stacks[name]; ok {
		return st, true
	}
	if st, ok := Traced[name]; ok { // traced.go
		return st, true
	}
	st, ok := References[name]
	return st, ok
}

// Floor is the least a controller of ConfigMaps can do: one WatchList
// (watch with sendInitialEvents=true, protobuf) opened as watchFrames
// says (a plain net/http client for the fake API server), each frame
// read and decoded with
// apimachinery's protobuf serializer (the decode client-go does: the
// WatchEvent, then the runtime.Unknown envelope and the ConfigMap), handed
// over one buffered channel to a single worker goroutine that calls
// observe. No cache, no queue, no deduplication, no retries; the
// connection is never re-established. workers is ignored.
func Floor(ctx context.Context, cfg *rest.Config, _ int, observe Observe) error {
	send, stop := worker(ctx, observe)
	defer stop()
	dec := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	var ev metav1.WatchEvent
	return watchFrames(ctx, cfg, "floor", func(frame []byte) error {
		// Unmarshal copies what it keeps (strings and the raw object), so
		// the frame's buffer is reused for the next frame.
		ev.Reset()
		if err := ev.Unmarshal(frame); err != nil {
			return fmt.Errorf("floor: decode watch event: %w", err)
		}
		switch watch.EventType(ev.Type) {
		case watch.Added, watch.Modified, watch.Deleted:
		case watch.Bookmark:
			return nil
		default:
			return fmt.Errorf("floor: watch event of type %q", ev.Type)
		}
		cm := &corev1.ConfigMap{}
		if _, _, err := dec.Decode(ev.Object.Raw, nil, cm); err != nil {
			return fmt.Errorf("floor: decode %s event: %w", ev.Type, err)
		}
		probe.Mark(probe.Yield)
		send(cm)
		return nil
	})
}

// Wire is the least any consumer of the watch can do: Floor's WatchList,
// but of each frame only the event type and the object's namespace, name
// and resourceVersion are read, in place, and observe is called on the
// goroutine that reads the connection. No decode, no handover, no other
// goroutine. Its latency is the kernel's and the wire's alone: what a
// client on this machine pays before any library code runs. workers is
// ignored.
func Wire(ctx context.Context, cfg *rest.Config, _ int, observe Observe) error {
	return wire(ctx, cfg, "wire", observe)
}

// WireWorker is Wire with the reconcile recorded on a second goroutine, a
// worker the reader hands each object to over a buffered channel, as a
// controller's workers are separate from its watch: Floor without the
// decode. workers is ignored.
func WireWorker(ctx context.Context, cfg *rest.Config, _ int, observe Observe) error {
	send, stop := worker(ctx, observe)
	defer stop()
	return wire(ctx, cfg, "wire-worker", send)
}

// worker starts one goroutine that calls observe with every object send
// hands it over a buffered channel (send gives up when ctx ends); stop
// waits for it to finish the objects already sent.
func worker(ctx context.Context, observe Observe) (send Observe, stop func()) {
	ch := make(chan *corev1.ConfigMap, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for cm := range ch {
			probe.Mark(probe.Observed)
			observe(cm)
		}
	}()
	send = func(cm *corev1.ConfigMap) {
		select {
		case ch <- cm:
		case <-ctx.Done():
		}
	}
	return send, func() { close(ch); <-done }
}

// wire reads the namespace, name and resourceVersion of each event's
// object in place and calls observe with them.
func wire(ctx context.Context, cfg *rest.Config, name string, observe Observe) error {
	return watchFrames(ctx, cfg, name, func(frame []byte) error {
		typ, obj := protoField(frame, 1), protoField(protoField(frame, 2), 1)
		if string(typ) == string(watch.Bookmark) {
			return nil
		}
		// obj is runtime.Unknown behind the 4-byte protobuf magic; its
		// field 2 is the ConfigMap, whose field 1 is the metadata.
		if len(obj) < 4 {
			return fmt.Errorf("%s: %s event without an object", name, typ)
		}
		meta := protoField(protoField(obj[4:], 2), 1)
		cm := &corev1.ConfigMap{}
		cm.Name, cm.Namespace, cm.ResourceVersion = string(protoField(meta, 1)), string(protoField(meta, 3)), string(protoField(meta, 6))
		if cm.Name == "" || cm.ResourceVersion == "" {
			return fmt.Errorf("%s: %s event: no name or resourceVersion in the object", name, typ)
		}
		observe(cm)
		return nil
	})
}

// protoField returns the payload of msg's first length-delimited field
// num, or nil.
func protoField(msg []byte, num uint64) []byte {
	for i := 0; i < len(msg); {
		tag, n := binary.Uvarint(msg[i:])
		if n <= 0 {
			return nil
		}
		i += n
		switch tag & 7 {
		case 0:
			if _, n = binary.Uvarint(msg[i:]); n <= 0 {
				return nil
			}
			i += n
		case 1:
			i += 8
		case 5:
			i += 4
		case 2:
			l, n := binary.Uvarint(msg[i:])
			if n <= 0 || l > uint64(len(msg)-i-n) {
				return nil
			}
			i += n
			if tag>>3 == num {
				return msg[i : i+int(l)]
			}
			i += int(l)
		default:
			return nil
		}
	}
	return nil
}

// watchFrames opens the WatchList of every ConfigMap (protobuf) and calls
// fn with each frame, whose bytes are reused once fn returns, until ctx
// ends (nil), the watch ends or fn fails. A plain http:// server (the
// fake API server) is read on a plain net/http client; an https:// one (a
// real API server, bench/real) on client-go's HTTP client for cfg, which
// carries its TLS and credentials.
func watchFrames(ctx context.Context, cfg *rest.Config, name string, fn func(frame []byte) error) error {
	url := strings.TrimSuffix(cfg.Host, "/") + "/api/v1/configmaps?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	req.Header.Set("Accept", runtime.ContentTypeProtobuf+";stream=watch")
	if cfg.UserAgent != "" {
		req.Header.Set("User-Agent", cfg.UserAgent)
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	if strings.HasPrefix(cfg.Host, "https://") {
		if client, err = rest.HTTPClientFor(cfg); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("%s: watch configmaps: %w", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: watch configmaps: %s", name, resp.Status)
	}
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	var (
		size [4]byte
		buf  []byte
	)
	for {
		if _, err := io.ReadFull(r, size[:]); err != nil {
			return endOfWatch(ctx, name, err)
		}
		n := int(binary.BigEndian.Uint32(size[:]))
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return endOfWatch(ctx, name, err)
		}
		probe.Mark(probe.Read)
		if err := fn(buf); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// endOfWatch is nil when the watch ended because ctx did.
func endOfWatch(ctx context.Context, name string, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s: the server closed the watch", name)
	}
	return fmt.Errorf("%s: read watch: %w", name, err)
}
