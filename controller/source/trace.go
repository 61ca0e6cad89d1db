package source

import (
	"time"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/trace"
)

// EventQueue is a queue that wants to know which event led to the
// Requests added to it: a controller with a Tracer (see package trace)
// hands one to its sources' Start. Kind and Channel sources then hand
// their handler, for each event, the queue ForEvent returns for it
// instead of the queue itself; the Requests added through that queue are
// linked to the event. A queue that is not an EventQueue costs the
// sources one nil check per event.
type EventQueue interface {
	handler.Queue
	// ForEvent returns the queue through which the handler adds the
	// Requests of ev.
	ForEvent(ev trace.Event) handler.Queue
}

// traceEvent describes an event of obj for a traced queue.
func traceEvent(typ trace.EventType, kind string, obj client.Object) trace.Event {
	return trace.Event{
		Type:            typ,
		Kind:            kind,
		Namespace:       obj.GetNamespace(),
		Name:            obj.GetName(),
		ResourceVersion: obj.GetResourceVersion(),
		Received:        time.Now(),
	}
}

// genericEvent describes a Channel event of obj, named by its kind (or Go
// type). obj need not be a client.Object: then only the event's type and
// time are known.
func genericEvent(obj any) trace.Event {
	if o, ok := obj.(client.Object); ok {
		return traceEvent(trace.EventGeneric, kindName(o), o)
	}
	return trace.Event{Type: trace.EventGeneric, Received: time.Now()}
}
