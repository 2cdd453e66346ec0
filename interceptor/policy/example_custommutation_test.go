package policy_test

import (
	"context"
	"fmt"
	"slices"

	"cloud.google.com/go/iam/apiv1/iampb"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// A Mutation of your own: turn on data-access audit logs for a service. It
// reports whether it changed the policy and changes nothing when the log is
// already on, so the Updater can rerun it after a conflict or a lost answer
// and apply it once; a second Update writes nothing.
func ExampleMutation() {
	auditReads := func(service string) policy.Mutation {
		return func(p *iampb.Policy) (bool, error) {
			for _, ac := range p.AuditConfigs {
				if ac.Service == service && slices.ContainsFunc(ac.AuditLogConfigs, func(c *iampb.AuditLogConfig) bool {
					return c.LogType == iampb.AuditLogConfig_DATA_READ
				}) {
					return false, nil
				}
			}
			p.AuditConfigs = append(p.AuditConfigs, &iampb.AuditConfig{Service: service,
				AuditLogConfigs: []*iampb.AuditLogConfig{{LogType: iampb.AuditLogConfig_DATA_READ}}})
			return true, nil
		}
	}
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	r, err := interceptor.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	u, err := policy.NewUpdater(policy.FromConn(srv.Conn()), r)
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 2 {
		p, err := u.Update(ctx, "projects/my-project", auditReads("storage.googleapis.com"))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(len(p.AuditConfigs), p.AuditConfigs[0].Service)
	}
	fmt.Println("writes:", srv.CountCalls(iamtest.MethodSetIamPolicy))
	// Output:
	// 1 storage.googleapis.com
	// 1 storage.googleapis.com
	// writes: 1
}
