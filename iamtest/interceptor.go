package iamtest

import (
	"context"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// intercept is the fault layer every method goes through, and the call log's
// source. In order: a method's outage (SetMethodOutage, answered at once);
// injected latency; an outage, script or rate failure
// (decided before the handler, which then does not run); a concurrent write
// slipped in before a SetIamPolicy; the handler; a lost answer (decided after
// a successful handler, whose write stays committed; the call is logged
// Applied).
func (s *Server) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	name := info.FullMethod
	method := Method(name)
	call := Call{Method: method, Resource: resourceOf(req), Time: s.now(), Attempt: attemptOf(ctx)}
	defer func() {
		call.Code = status.Code(err)
		s.log.add(call)
	}()

	if code, ok := s.faults.down(method); ok {
		call.Injected = true
		return nil, s.faults.injectedError(code, nil, name, call.Resource, "outage: "+code.String()+" for "+name, s.fid().iamMessages)
	}
	if d := s.faults.latencyFor(method); d > 0 {
		if err := s.sleep(ctx, d); err != nil {
			return nil, status.FromContextError(err).Err()
		}
	}
	if err := s.chargeQuota(ctx, method); err != nil {
		return nil, err
	}
	iamMessages := s.fid().iamMessages
	if code, ready, ok := s.faults.decide(method); ok {
		call.Injected = true
		return nil, s.faults.injectedError(code, ready, name, call.Resource, code.String()+" for "+name, iamMessages)
	}
	if set, ok := req.(*iampb.SetIamPolicyRequest); ok && set.GetResource() != "" && s.faults.interleaveWrite(method) {
		s.bumpEtag(set.GetResource())
	}
	if name, ok := denyWriteTarget(req); ok && s.faults.interleaveWrite(method) {
		s.bumpDenyEtag(name)
	}
	if up, ok := req.(*adminpb.UpdateRoleRequest); ok && s.faults.interleaveWrite(method) {
		s.bumpRoleEtag(up.GetName())
	}
	resp, err = handler(ctx, req)
	call.Applied = err == nil
	call.op = s.denyOpOf(method, resp)
	if err == nil && s.faults.loseAnswer(method) {
		call.Injected = true
		return nil, s.faults.injectedError(codes.Unavailable, nil, name, call.Resource, "lost answer for "+name+" (the call was applied)", iamMessages)
	}
	return resp, err
}

// attemptOf reads the x-retry-attempt incoming metadata value.
func attemptOf(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(attemptHeader); len(v) > 0 {
		return v[0]
	}
	return ""
}
