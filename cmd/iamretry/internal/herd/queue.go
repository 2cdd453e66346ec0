package herd

import (
	"container/heap"
	"time"
)

// event is one thing that happens to one client at a virtual time.
type event struct {
	at     time.Duration
	seq    uint64 // push order: equal times are handled first in, first out
	client int32
	kind   uint8 // meaning is up to the simulator
}

// queue is a min-heap of events ordered by (at, seq), so the order in which
// events pop is fully determined by the order in which they were pushed.
type queue struct {
	events []event
	seq    uint64
}

func (q *queue) Len() int { return len(q.events) }
func (q *queue) Less(i, j int) bool {
	a, b := &q.events[i], &q.events[j]
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}
func (q *queue) Swap(i, j int) { q.events[i], q.events[j] = q.events[j], q.events[i] }
func (q *queue) Push(x any)    { q.events = append(q.events, x.(event)) }
func (q *queue) Pop() any {
	n := len(q.events) - 1
	e := q.events[n]
	q.events = q.events[:n]
	return e
}

// schedule adds an event for client at time at.
func (q *queue) schedule(at time.Duration, client int, kind uint8) {
	q.seq++
	heap.Push(q, event{at: at, seq: q.seq, client: int32(client), kind: kind})
}

// next removes and returns the earliest event; the queue must not be empty.
func (q *queue) next() event { return heap.Pop(q).(event) }
