package main

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	crm "google.golang.org/api/cloudresourcemanager/v3"
	iam "google.golang.org/api/iam/v1"
	"google.golang.org/api/option"
	htransport "google.golang.org/api/transport/http"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
	"github.com/iamretry/iamretry/interceptor/policy/crmv3"
	"github.com/iamretry/iamretry/interceptor/policy/iamv1"
)

// The transports of the policy command.
const (
	transportGRPC = "grpc"
	transportREST = "rest"
)

// restAdapters are the discovery clients that --transport rest reaches, by
// the gRPC service of the route: Resource Manager v3 for projects, folders
// and organizations, IAM v1 for service accounts.
var restAdapters = map[string]func(context.Context, ...option.ClientOption) (policy.Client, error){
	"google.cloud.resourcemanager.v3.Projects":      restAdapter(crm.NewService, crmv3.Projects),
	"google.cloud.resourcemanager.v3.Folders":       restAdapter(crm.NewService, crmv3.Folders),
	"google.cloud.resourcemanager.v3.Organizations": restAdapter(crm.NewService, crmv3.Organizations),
	"google.iam.admin.v1.IAM":                       restAdapter(iam.NewService, iamv1.ServiceAccounts),
}

// restAdapter builds a discovery service with newService and adapts it to
// a policy.Client with adapt.
func restAdapter[S any](newService func(context.Context, ...option.ClientOption) (S, error), adapt func(S) policy.Client) func(context.Context, ...option.ClientOption) (policy.Client, error) {
	return func(ctx context.Context, opts ...option.ClientOption) (policy.Client, error) {
		s, err := newService(ctx, opts...)
		if err != nil {
			return nil, err
		}
		return adapt(s), nil
	}
}

// restKinds says which resources --transport rest supports.
const restKinds = "projects/P, folders/F, organizations/O and projects/P/serviceAccounts/EMAIL"

// checkTransport validates --transport, and with rest the resource's route
// and --endpoint (a URL, or HOST:PORT); it sets f.restBase.
func (f *policyFlags) checkTransport() error {
	switch f.transport {
	case transportGRPC:
		if f.endpoint != "" && strings.Contains(f.endpoint, "://") {
			return usagef("--endpoint %q: the gRPC transport takes HOST:PORT, such as 127.0.0.1:8085 (a URL is for --transport rest)", f.endpoint)
		}
		return nil
	case transportREST:
	default:
		return usagef("--transport %q: want grpc or rest", f.transport)
	}
	if _, ok := restAdapters[f.route.grpcService]; !ok {
		return usagef("--resource %q: --transport rest is supported for %s (through cloudresourcemanager/v3 and iam/v1); use --transport grpc, the default, for this one", f.resource, restKinds)
	}
	if f.endpoint == "" {
		return nil
	}
	base, err := restEndpoint(f.endpoint, f.insecure)
	if err != nil {
		return err
	}
	f.restBase = base
	return nil
}

// restEndpoint turns --endpoint into the base URL of a discovery client:
// an http:// or https:// URL as given (ending in "/"), or HOST:PORT as
// http://HOST:PORT/ with --insecure and https://HOST:PORT/ without.
func restEndpoint(ep string, insecure bool) (string, error) {
	if !strings.Contains(ep, "://") {
		if err := checkHostPort(ep, "http://127.0.0.1:8086/"); err != nil {
			return "", err
		}
		if insecure {
			return "http://" + ep + "/", nil
		}
		return "https://" + ep + "/", nil
	}
	u, err := url.Parse(ep)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", usagef("--endpoint %q: want a base URL such as http://127.0.0.1:8086/, or HOST:PORT", ep)
	}
	switch {
	case u.Scheme == "http" && !insecure:
		return "", usagef("--endpoint %q: plain http has no TLS; add --insecure (for a local fake, without credentials) or use https://", ep)
	case u.Scheme == "https" && insecure:
		return "", usagef("--endpoint %q: --insecure means plain HTTP without credentials; give http://%s/", ep, u.Host)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", usagef("--endpoint %q: the scheme must be http or https", ep)
	}
	if _, port, err := net.SplitHostPort(u.Host); err == nil {
		if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
			return "", usagef("--endpoint %q: the port must be a number from 1 to 65535", ep)
		}
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u.String(), nil
}

// restClient builds the discovery client of the route, over an
// *http.Client whose transport is rt's RoundTripper around the
// authenticated transport (Application Default Credentials; nothing with
// --insecure): each retry goes through the auth transport, so it
// re-authenticates when the token expired. Calls of an Updater pass through
// the RoundTripper (the Updater owns their retries).
func restClient(ctx context.Context, f *policyFlags, rt *interceptor.Retrier) (policy.Client, func() error, error) {
	newClient := restAdapters[f.route.grpcService]
	hb := http.DefaultTransport.(*http.Transport).Clone()
	var base http.RoundTripper = hb
	if !f.insecure {
		auth, err := htransport.NewTransport(ctx, hb, option.WithScopes("https://www.googleapis.com/auth/cloud-platform"))
		if err != nil {
			return nil, nil, err
		}
		base = auth
	}
	opts := []option.ClientOption{option.WithHTTPClient(&http.Client{Transport: rt.RoundTripper(base)})}
	if f.restBase != "" {
		opts = append(opts, option.WithEndpoint(f.restBase))
	}
	c, err := newClient(ctx, opts...)
	if err != nil {
		hb.CloseIdleConnections()
		return nil, nil, err
	}
	return c, func() error { hb.CloseIdleConnections(); return nil }, nil
}

// checkHostPort validates an --endpoint given as HOST:PORT.
func checkHostPort(ep, example string) error {
	if _, port, err := net.SplitHostPort(ep); err != nil {
		return usagef("--endpoint %q: want HOST:PORT, such as %s", ep, example)
	} else if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
		return usagef("--endpoint %q: the port must be a number from 1 to 65535", ep)
	}
	return nil
}
