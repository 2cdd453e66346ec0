package iamtest

import (
	"context"
	"strings"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// IAM's per-minute request quotas, per consumer project
// (https://cloud.google.com/iam/quotas): the IAM v1 API (the admin service,
// google.iam.admin.v1.IAM) allows 6,000 reads and 600 writes a minute, the
// IAM v2 API (deny policies, google.iam.v2.Policies, and the polls of their
// operations) 5 reads and 5 writes a minute. SetQuotas applies them.
const (
	QuotaV1ReadsPerMinute  = 6000
	QuotaV1WritesPerMinute = 600
	QuotaV2ReadsPerMinute  = 5
	QuotaV2WritesPerMinute = 5
)

// quotas counts calls per consumer and quota in the current minute of the
// fake's clock.
type quotas struct {
	mu     sync.Mutex
	on     bool
	minute time.Time
	used   map[quotaKey]int
}

type quotaKey struct {
	consumer string
	q        *quotaLimit
}

// quotaLimit is one of IAM's per-minute quotas.
type quotaLimit struct {
	limit        int
	metricName   string // as the message names it
	metric       string // ErrorInfo quota_metric
	limitName    string // ErrorInfo quota_limit
	limitMessage string // as the message names the limit
}

var (
	quotaV1Read  = &quotaLimit{QuotaV1ReadsPerMinute, "Read requests", "iam.googleapis.com/read_requests", "ReadRequestsPerMinutePerProject", "Read requests per minute"}
	quotaV1Write = &quotaLimit{QuotaV1WritesPerMinute, "Write requests", "iam.googleapis.com/write_requests", "WriteRequestsPerMinutePerProject", "Write requests per minute"}
	quotaV2Read  = &quotaLimit{QuotaV2ReadsPerMinute, "V2 read requests", "iam.googleapis.com/v2_read_requests", "V2ReadRequestsPerMinutePerProject", "V2 read requests per minute"}
	quotaV2Write = &quotaLimit{QuotaV2WritesPerMinute, "V2 write requests", "iam.googleapis.com/v2_write_requests", "V2WriteRequestsPerMinutePerProject", "V2 write requests per minute"}
)

// SetQuotas turns IAM's per-minute request quotas on or off (off by
// default): QuotaV1ReadsPerMinute and QuotaV1WritesPerMinute for the admin
// service, QuotaV2ReadsPerMinute and QuotaV2WritesPerMinute for deny
// policies and their operations, per consumer (the call's
// x-goog-user-project, else project 0) and whole minute of the fake's clock.
// A call past them is refused before the fake acts, as Google's front end
// refuses it (https://cloud.google.com/docs/quotas/troubleshoot): HTTP 429
// RESOURCE_EXHAUSTED "Quota exceeded for quota metric ...", with ErrorInfo
// ReasonRateLimitExceeded and a QuotaFailure, and no RetryInfo. Reads are
// the Get, List, Query, Test, Lint and Search methods; other services are
// not counted. Switching starts the count afresh; ResetFaults leaves it.
func (s *Server) SetQuotas(on bool) {
	s.quotas.mu.Lock()
	defer s.quotas.mu.Unlock()
	s.quotas.on = on
	s.quotas.used = nil
}

// chargeQuota counts a call of method against its quota and returns the
// refusal when the quota of this minute is spent.
func (s *Server) chargeQuota(ctx context.Context, method Method) error {
	s.quotas.mu.Lock()
	on := s.quotas.on
	s.quotas.mu.Unlock()
	if !on {
		return nil
	}
	q := quotaOf(method)
	if q == nil {
		return nil
	}
	consumer := "0"
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get("x-goog-user-project"); len(v) > 0 && v[0] != "" {
			consumer = v[0]
		}
	}
	minute := s.now().Truncate(time.Minute)
	s.quotas.mu.Lock()
	defer s.quotas.mu.Unlock()
	if !minute.Equal(s.quotas.minute) || s.quotas.used == nil {
		s.quotas.minute, s.quotas.used = minute, map[quotaKey]int{}
	}
	k := quotaKey{consumer, q}
	if s.quotas.used[k] >= q.limit {
		return quotaError(q, consumer)
	}
	s.quotas.used[k]++
	return nil
}

// quotaOf returns the quota that method is charged to, nil for none.
func quotaOf(method Method) *quotaLimit {
	service, verb, _ := strings.Cut(strings.TrimPrefix(string(method), "/"), "/")
	read := false
	for _, p := range []string{"Get", "List", "Query", "Test", "Lint", "Search"} {
		if strings.HasPrefix(verb, p) {
			read = true
		}
	}
	switch service {
	case "google.iam.admin.v1.IAM":
		if read {
			return quotaV1Read
		}
		return quotaV1Write
	case "google.iam.v2.Policies", "google.longrunning.Operations":
		if read {
			return quotaV2Read
		}
		return quotaV2Write
	}
	return nil
}

// quotaError is the RESOURCE_EXHAUSTED answer for q spent by consumer.
func quotaError(q *quotaLimit, consumer string) error {
	msg := "Quota exceeded for quota metric '" + q.metricName + "' and limit '" + q.limitMessage +
		"' of service 'iam.googleapis.com' for consumer 'project_number:" + consumer + "'."
	return withDetails(status.New(codes.ResourceExhausted, msg),
		&errdetails.ErrorInfo{Reason: ReasonRateLimitExceeded, Domain: "googleapis.com", Metadata: map[string]string{
			"service": "iam.googleapis.com", "quota_metric": q.metric, "quota_limit": q.limitName,
			"consumer": "projects/" + consumer,
		}},
		&errdetails.QuotaFailure{Violations: []*errdetails.QuotaFailure_Violation{{
			Subject: "project_number:" + consumer, Description: msg,
		}}},
	).Err()
}
