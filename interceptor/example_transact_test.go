package interceptor_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// labelStore is an object this library does not know: a set of labels
// guarded by an etag, as a service of your own might keep it. A write with
// a stale etag is refused ABORTED, as IAM refuses one.
type labelStore struct {
	mu     sync.Mutex
	etag   int
	labels []string
	writes int
}

type labels struct {
	etag   string
	labels []string
}

func (s *labelStore) get(context.Context) (*labels, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &labels{etag: strconv.Itoa(s.etag), labels: slices.Clone(s.labels)}, nil
}

func (s *labelStore) put(_ context.Context, l *labels) (*labels, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	if l.etag != strconv.Itoa(s.etag) {
		return nil, status.Error(codes.Aborted, "etag mismatch: the labels changed since they were read")
	}
	s.etag++
	s.labels = slices.Clone(l.labels)
	return &labels{etag: strconv.Itoa(s.etag), labels: slices.Clone(s.labels)}, nil
}

// Transact runs the read-modify-write of any object guarded by an etag on a
// Retrier. Another writer changes the labels between the read and the
// write: the write is refused ABORTED and the whole runs again from a fresh
// read, keeping both changes. Modify is idempotent (adding a label that is
// there changes nothing), so a second Transact writes nothing.
func ExampleTransact() {
	ctx := context.Background()
	store := &labelStore{}
	r, err := interceptor.New(
		interceptor.WithClock(&exampleClock{}), // a test clock; leave it out in a program
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			fmt.Printf("%s %s attempt %d: %v, %s\n", a.Method, a.Resource, a.N, a.Class, a.Reason)
		}))
	if err != nil {
		fmt.Println(err)
		return
	}
	raced := false
	addLabel := func(label string) interceptor.ReadModifyWrite[*labels] {
		return interceptor.ReadModifyWrite[*labels]{
			Method:   "example.Labels/Add",
			Resource: "labels/demo",
			Read: func(ctx context.Context) (*labels, error) {
				l, err := store.get(ctx)
				if !raced { // another writer commits between our read and our write
					raced = true
					store.put(ctx, &labels{etag: l.etag, labels: append(slices.Clone(l.labels), "team=ops")})
				}
				return l, err
			},
			Modify: func(l *labels) (*labels, bool, error) {
				if slices.Contains(l.labels, label) {
					return l, false, nil
				}
				l.labels = append(l.labels, label)
				return l, true, nil
			},
			Write: store.put, // sends the etag read
			Etag:  func(l *labels) string { return l.etag },
		}
	}
	for range 2 {
		l, err := interceptor.Transact(ctx, r, addLabel("env=prod"))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(l.labels, "etag", l.etag)
	}
	fmt.Println("writes:", store.writes)
	// Output:
	// example.Labels/Add labels/demo attempt 1: Conflict, retry
	// example.Labels/Add labels/demo attempt 2: Permanent, succeeded
	// [team=ops env=prod] etag 2
	// [team=ops env=prod] etag 2
	// writes: 3
}
