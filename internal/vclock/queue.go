package vclock

import "time"

// sleeper is one Sleep waiting for its wake-up.
type sleeper struct {
	wake   time.Time
	d      time.Duration
	thread int
	seq    uint64
	woken  chan struct{} // closed at the wake-up
	index  int           // in the heap; -1 once popped
	// ctx is the sleep's context when it can end (nil: it cannot); ended is
	// set, under the clock's lock, when the sleeper is woken because it did.
	ctx   interface{ Err() error }
	ended bool
}

// sleeperHeap is a container/heap of sleepers, earliest wake-up first; ties
// go to the lower thread, then to the earlier Sleep.
type sleeperHeap []*sleeper

func (h sleeperHeap) Len() int { return len(h) }

func (h sleeperHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if !a.wake.Equal(b.wake) {
		return a.wake.Before(b.wake)
	}
	if a.thread != b.thread {
		return a.thread < b.thread
	}
	return a.seq < b.seq
}

func (h sleeperHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *sleeperHeap) Push(x any) {
	s := x.(*sleeper)
	s.index = len(*h)
	*h = append(*h, s)
}

func (h *sleeperHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	s.index = -1
	return s
}
