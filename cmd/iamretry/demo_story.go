package main

// The story of `iamretry demo`: step 0 (the documented schedule) and the
// seven steps, each a call (or a race of calls) on the fake with the faults
// the step sets. A step reports what its calls returned and an outcome;
// what each call should end with is checked in one place, the tests over
// `iamretry demo --json` (demo_test.go). The runner (demo.go) runs the
// steps; the wiring (demo_wiring.go) builds their clients and Updaters.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// documentedSchedule computes step 0 from the defaults themselves.
func documentedSchedule() scheduleInfo {
	b := interceptor.DefaultBackoff()
	deadline := interceptor.DefaultDeadline
	almost1 := math.Nextafter(1, 0)
	info := scheduleInfo{InitialMS: b.Initial.Milliseconds(), Multiplier: b.Multiplier,
		MaxBackoffMS: b.Max.Milliseconds(), DeadlineMS: deadline.Milliseconds(),
		deadline: deadline, max: b.Max, initial: b.Initial}
	nb := b
	nb.Jitter = interceptor.NoJitter
	var soonest time.Duration // the earliest the waits so far can end
	info.MaxAttempts = 0
	for n := 0; ; n++ {
		base := nb.Delay(n, 0)
		lo, hi := b.Delay(n, 0), b.Delay(n, almost1)
		hi = hi.Truncate(time.Millisecond) // [lo, hi] shown to the millisecond: hi < lo+1s
		r := scheduleRow{Retry: n, BaseMS: base.Milliseconds(),
			JitterMin: (lo - base).Milliseconds(), JitterMax: (hi - base).Milliseconds(),
			WaitMin: lo.Milliseconds(), WaitMax: hi.Milliseconds(), Truncated: lo == hi && base == b.Max,
			base: base, jitterMin: lo - base, jitterMax: hi - base + time.Millisecond, waitMin: lo, waitMax: hi}
		if r.Truncated {
			r.jitterMax = 0
		}
		info.Rows = append(info.Rows, r)
		if info.MaxAttempts == 0 && soonest+lo > deadline {
			info.MaxAttempts = n + 1
		}
		soonest += lo
		if r.Truncated && info.MaxAttempts > 0 {
			break
		}
	}
	return info
}

// demoSteps is the story.
func demoSteps() []demoStep {
	return []demoStep{
		{
			n:        1,
			title:    "Transient failures are retried with backoff",
			story:    "transient failures, then OK",
			guidance: "The guidance: retry 500, 502, 503 and 504 with truncated exponential backoff with jitter.",
			run:      stepTransient,
		},
		{
			n:        2,
			title:    "A new service account is not visible yet: NOT_FOUND, retried on request",
			story:    "new account NOT_FOUND, opted in",
			guidance: "The guidance: IAM is eventually consistent; a 404 right after a create may be retried. Only calls that opt in do.",
			run:      stepPropagation,
		},
		{
			n:        3,
			title:    "CreateServiceAccountKey fails UNAVAILABLE and is not retried",
			story:    "CreateServiceAccountKey not retried",
			guidance: "Only requests that are safe to repeat are retried: each CreateServiceAccountKey mints a new private key.",
			run:      stepUnsafe,
		},
		{
			n:        4,
			title:    "Five writers race to add bindings to one policy",
			story:    "five writers race, all land",
			guidance: "The guidance: on 409 ABORTED (a concurrent change) retry the whole read-modify-write, never the write alone.",
			run:      stepContention,
		},
		{
			n:        5,
			title:    "A write commits but its answer is lost",
			story:    "lost answer: rerun finds it done",
			guidance: "A rerun of the read-modify-write must not apply a change twice: it reads first, and finds its work done.",
			run:      stepLostAnswer,
		},
		{
			n:        6,
			title:    "An outage longer than the retry deadline",
			story:    "outage outlasts the deadline",
			guidance: "The guidance: keep retrying until a deadline, then give up with the error the server sent.",
			run:      stepOutage,
		},
		{
			n:     7,
			title: "Create an account, grant it a role at once",
			story: "grant to a new account, opted in",
			guidance: "IAM is eventually consistent: until a new account propagates, a grant to it is refused " +
				"INVALID_ARGUMENT \"Service account ... does not exist.\" An Updater with interceptor.WithRetryNotFound " +
				"reruns the read-modify-write until it is visible, within the deadline; without the opt-in the refusal " +
				"returns at once.",
			run: stepGrantNewAccount,
		},
	}
}

var demoPolicyResource = "projects/demo-project/topics/orders"

// callsOf counts the calls to m among calls that were answered code.
func callsOf(calls []iamtest.Call, m iamtest.Method, code codes.Code) int {
	n := 0
	for _, c := range calls {
		if c.Method == m && c.Code == code {
			n++
		}
	}
	return n
}

func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// step 1.
func stepTransient(ctx context.Context, d *demo, s *stepState) error {
	d.fake.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Unavailable)
	d.fake.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Internal)
	d.fake.FailNext(iamtest.MethodGetIamPolicy, 1, codes.DeadlineExceeded)
	_, err := d.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: demoPolicyResource})
	d.returned(s, "", iamtest.MethodGetIamPolicy.String(), err)
	s.outcome = fmt.Sprintf("%s after %s", codeName(status.Code(err)), plural(d.fake.CountCalls(iamtest.MethodGetIamPolicy)-1, "retry"))
	s.outcome = strings.Replace(s.outcome, "retrys", "retries", 1)
	return nil
}

// step 2.
func stepPropagation(ctx context.Context, d *demo, s *stepState) error {
	d.fake.SetPropagationReads(2)
	defer d.fake.SetPropagationReads(0)
	sa, err := d.admin.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{
		Name: "projects/demo-project", AccountId: "deployer",
		ServiceAccount: &adminpb.ServiceAccount{DisplayName: "deployer"},
	})
	if err != nil {
		return fmt.Errorf("CreateServiceAccount: %w", err)
	}
	d.account = sa
	d.note(s.n, "created "+sa.Email+"; reading it back at once, with gax.WithGRPCOptions(interceptor.RetryNotFound())")
	_, err = d.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.Name},
		gax.WithGRPCOptions(interceptor.RetryNotFound()))
	d.returned(s, "", iamtest.MethodGetServiceAccount.String(), err)
	notFound := callsOf(d.fake.Calls(), iamtest.MethodGetServiceAccount, codes.NotFound)
	s.outcome = fmt.Sprintf("%s after %d NOT_FOUND", codeName(status.Code(err)), notFound)
	return nil
}

// step 3.
func stepUnsafe(ctx context.Context, d *demo, s *stepState) error {
	if d.account == nil {
		return errors.New("no service account: step 2 failed")
	}
	d.fake.FailNext(iamtest.MethodCreateServiceAccountKey, 1, codes.Unavailable)
	_, err := d.admin.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: d.account.Name})
	d.returned(s, "", iamtest.MethodCreateServiceAccountKey.String(), err)
	d.note(s.n, "why: each call mints a new private key. Had the first one committed and only its answer been lost, "+
		"a retry would leave a live key that nobody holds. The caller decides: list the keys, create again if none was made.")
	s.outcome = fmt.Sprintf("%s after %s", codeName(status.Code(err)), plural(d.fake.CountCalls(iamtest.MethodCreateServiceAccountKey), "call"))
	return nil
}

// step 4.
func stepContention(ctx context.Context, d *demo, s *stepState) error {
	const writers = 5
	owner := "user:owner@example.com"
	if _, err := iampb.NewIAMPolicyClient(d.fake.Conn()).SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: demoPolicyResource,
		Policy: &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/owner", Members: []string{owner}}}}}); err != nil {
		return err
	}
	d.fake.ResetCalls() // the policy was there before the step
	// Five separate Updaters on five clients: one Updater would coalesce
	// the five changes into one read-modify-write, and there would be no
	// race to show.
	updaters := make([]*policy.Updater, writers+1)
	for i := 1; i <= writers; i++ {
		who := fmt.Sprintf("writer-%d", i)
		pc, _, err := d.clients(ctx, who, d.flags.seed+uint64(i), false)
		if err != nil {
			return err
		}
		u, err := d.newUpdater(pc, d.retrierOptions(who, d.flags.seed+100+uint64(i))...)
		if err != nil {
			return err
		}
		updaters[i] = u
	}
	d.note(s.n, fmt.Sprintf("%d writers, each with its own policy.Updater, add roles/viewer for themselves to %s at the same moment; %s was there before",
		writers, demoPolicyResource, owner))
	errs := make([]error, writers+1)
	d.clk.Go(ctx, writers, func(ctx context.Context, i int) {
		i++ // writer-1 .. writer-n
		_, errs[i] = updaters[i].Update(ctx, demoPolicyResource, policy.AddBinding("roles/viewer", writerMember(i)))
	})
	landed := 0
	for i := 1; i <= writers; i++ {
		d.returned(s, fmt.Sprintf("writer-%d", i), policy.UpdateMethod, errs[i])
		if errs[i] == nil {
			landed++
		}
	}
	calls := d.fake.Calls()
	aborted := callsOf(calls, iamtest.MethodSetIamPolicy, codes.Aborted)
	d.note(s.n, fmt.Sprintf("the server saw %s and %s; %s ABORTED",
		plural(d.fake.CountCalls(iamtest.MethodGetIamPolicy), "read"), plural(d.fake.CountCalls(iamtest.MethodSetIamPolicy), "write"), plural(aborted, "write")))
	s.show = append(s.show, shownPolicy{resource: demoPolicyResource})
	s.outcome = fmt.Sprintf("%d/%d landed after %s", landed, writers, plural(aborted, "conflict"))
	return nil
}

func writerMember(i int) string { return fmt.Sprintf("user:writer-%d@example.com", i) }

// step 5.
func stepLostAnswer(ctx context.Context, d *demo, s *stepState) error {
	if d.account == nil {
		return errors.New("no service account: step 2 failed")
	}
	// The service account's own policy, through the admin API's hand-written
	// GetIamPolicy/SetIamPolicy (policy.FromAdmin).
	u, err := d.newUpdater(policy.FromAdmin(d.admin), d.retrierOptions("", d.flags.seed+200)...)
	if err != nil {
		return err
	}
	member := "user:alice@example.com"
	const role = "roles/iam.serviceAccountUser"
	d.fake.LoseNextAnswers(iamtest.MethodAdminSetIamPolicy, 1)
	d.note(s.n, "granting "+member+" "+role+" on "+d.account.Email+" (the admin API holds its policy); "+
		"the fake will commit the write and then answer UNAVAILABLE")
	_, err = u.Update(ctx, d.account.Name, policy.AddBinding(role, member))
	d.returned(s, "", policy.UpdateMethod, err)
	s.show = append(s.show, shownPolicy{resource: d.account.Name, viaAdmin: true})
	s.outcome = fmt.Sprintf("%s in %s", codeName(status.Code(err)), plural(d.fake.CountCalls(iamtest.MethodAdminSetIamPolicy), "write"))
	return nil
}

// step 6.
func stepOutage(ctx context.Context, d *demo, s *stepState) error {
	d.fake.SetOutage(iamtest.AnyMethod, codes.Unavailable)
	defer d.fake.ClearOutage(iamtest.AnyMethod)
	d.note(s.n, "the fake is down for longer than the deadline; the retry deadline is "+fmtDur(interceptor.DefaultDeadline)+" from the first failure")
	_, err := d.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: demoPolicyResource})
	d.returned(s, "", iamtest.MethodGetIamPolicy.String(), err)
	s.outcome = fmt.Sprintf("%s after %s", codeName(status.Code(err)), plural(d.fake.CountCalls(iamtest.MethodGetIamPolicy), "attempt"))
	return nil
}

// demoPropagation is how long step 7's new account stays invisible.
const demoPropagation = 5 * time.Second

// step 7 (issue 14): grant a role to a service account created moments ago.
func stepGrantNewAccount(ctx context.Context, d *demo, s *stepState) error {
	d.fake.SetPropagationDelay(demoPropagation)
	defer d.fake.SetPropagationDelay(0)
	sa, err := d.admin.CreateServiceAccount(ctx, &adminpb.CreateServiceAccountRequest{
		Name: "projects/demo-project", AccountId: "publisher",
		ServiceAccount: &adminpb.ServiceAccount{DisplayName: "publisher"},
	})
	if err != nil {
		return fmt.Errorf("CreateServiceAccount: %w", err)
	}
	member, role := "serviceAccount:"+sa.Email, "roles/pubsub.publisher"
	d.note(s.n, fmt.Sprintf("created %s; IAM will not see it for %s (iamtest.SetPropagationDelay). Granting it %s on %s at once, "+
		"first with an Updater without the opt-in, then with one made with interceptor.WithRetryNotFound()",
		sa.Email, fmtDur(demoPropagation), role, demoPolicyResource))

	plain, err := d.updater(ctx, "plain", 300)
	if err != nil {
		return err
	}
	_, err = plain.Update(ctx, demoPolicyResource, policy.AddBinding(role, member))
	d.returned(s, "plain", policy.UpdateMethod, err)
	d.note(s.n, "without the opt-in the refusal comes back at once, and its message names the option")

	optIn, err := d.updater(ctx, "opt-in", 310, interceptor.WithRetryNotFound())
	if err != nil {
		return err
	}
	before := callsOf(d.fake.Calls(), iamtest.MethodSetIamPolicy, codes.InvalidArgument)
	_, err = optIn.Update(ctx, demoPolicyResource, policy.AddBinding(role, member))
	d.returned(s, "opt-in", policy.UpdateMethod, err)
	s.show = append(s.show, shownPolicy{resource: demoPolicyResource})
	refused := callsOf(d.fake.Calls(), iamtest.MethodSetIamPolicy, codes.InvalidArgument) - before
	s.outcome = fmt.Sprintf("%s after %s", codeName(status.Code(err)), plural(refused, "refusal"))
	return nil
}
