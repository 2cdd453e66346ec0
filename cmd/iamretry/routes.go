package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/api/option"
	gtransport "google.golang.org/api/transport/grpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// route says where the IAM policy of one kind of resource lives: each Google
// API serves the IAM methods of its own resources, some as the
// google.iam.v1.IAMPolicy mixin, some on a service of their own.
type route struct {
	host     string   // the full resource name's service: "pubsub.googleapis.com"
	patterns []string // relative names it serves, "*" for one segment
	// endpoint is the API's gRPC endpoint; grpcService the service that
	// holds its GetIamPolicy and SetIamPolicy.
	endpoint, grpcService string
	// client is the GAPIC client a Go program hands policy.NewUpdater for
	// such a resource (it meets policy.Client as it is, or through the
	// adapter named).
	client string
}

// routes is every service the policy command reaches. Relative names of
// projects, folders, organizations and service accounts need no service
// (their API is the obvious one); everything else is given by its full
// resource name, //SERVICE/RELATIVE_NAME.
var routes = []route{
	{host: "iam.googleapis.com", patterns: []string{"projects/*/serviceAccounts/*"},
		endpoint: "iam.googleapis.com:443", grpcService: "google.iam.admin.v1.IAM",
		client: "cloud.google.com/go/iam/admin/apiv1 IamClient, through policy.FromAdmin"},
	{host: "cloudresourcemanager.googleapis.com", patterns: []string{"projects/*"},
		endpoint: "cloudresourcemanager.googleapis.com:443", grpcService: "google.cloud.resourcemanager.v3.Projects",
		client: "cloud.google.com/go/resourcemanager/apiv3 ProjectsClient"},
	{host: "cloudresourcemanager.googleapis.com", patterns: []string{"folders/*"},
		endpoint: "cloudresourcemanager.googleapis.com:443", grpcService: "google.cloud.resourcemanager.v3.Folders",
		client: "cloud.google.com/go/resourcemanager/apiv3 FoldersClient"},
	{host: "cloudresourcemanager.googleapis.com", patterns: []string{"organizations/*"},
		endpoint: "cloudresourcemanager.googleapis.com:443", grpcService: "google.cloud.resourcemanager.v3.Organizations",
		client: "cloud.google.com/go/resourcemanager/apiv3 OrganizationsClient"},
	{host: "pubsub.googleapis.com", patterns: []string{"projects/*/topics/*", "projects/*/subscriptions/*", "projects/*/snapshots/*", "projects/*/schemas/*"},
		endpoint: "pubsub.googleapis.com:443", grpcService: "google.iam.v1.IAMPolicy",
		client: "cloud.google.com/go/pubsub/apiv1 PublisherClient, SubscriberClient or SchemaClient"},
	{host: "secretmanager.googleapis.com", patterns: []string{"projects/*/secrets/*"},
		endpoint: "secretmanager.googleapis.com:443", grpcService: "google.cloud.secretmanager.v1.SecretManagerService",
		client: "cloud.google.com/go/secretmanager/apiv1 Client"},
	{host: "cloudkms.googleapis.com", patterns: []string{"projects/*/locations/*/keyRings/*", "projects/*/locations/*/keyRings/*/cryptoKeys/*"},
		endpoint: "cloudkms.googleapis.com:443", grpcService: "google.iam.v1.IAMPolicy",
		client: "cloud.google.com/go/kms/apiv1 KeyManagementClient"},
	{host: "run.googleapis.com", patterns: []string{"projects/*/locations/*/services/*"},
		endpoint: "run.googleapis.com:443", grpcService: "google.cloud.run.v2.Services",
		client: "cloud.google.com/go/run/apiv2 ServicesClient"},
	{host: "run.googleapis.com", patterns: []string{"projects/*/locations/*/jobs/*"},
		endpoint: "run.googleapis.com:443", grpcService: "google.cloud.run.v2.Jobs",
		client: "cloud.google.com/go/run/apiv2 JobsClient"},
}

// shortNames are the relative names that need no service.
var shortNames = map[string]string{
	"projects/*": "cloudresourcemanager.googleapis.com", "folders/*": "cloudresourcemanager.googleapis.com",
	"organizations/*": "cloudresourcemanager.googleapis.com", "projects/*/serviceAccounts/*": "iam.googleapis.com",
}

// matches reports whether the relative name rel has the shape of pattern.
func matches(pattern, rel string) bool {
	ps, rs := strings.Split(pattern, "/"), strings.Split(rel, "/")
	if len(ps) != len(rs) {
		return false
	}
	for i, p := range ps {
		if p != "*" && p != rs[i] {
			return false
		}
	}
	return true
}

// resolve finds the route of a --resource: a relative name of a project,
// folder, organization or service account, or a full resource name of a
// service in routes. It returns the relative name to send. Anything else
// is a usage error naming the full-name form and the clients there are.
func resolve(resource string) (route, string, error) {
	host, rel := "", resource
	if rest, ok := strings.CutPrefix(resource, "//"); ok {
		var found bool
		host, rel, found = strings.Cut(rest, "/")
		if !found || host == "" || rel == "" {
			return route{}, "", usagef("--resource %q: a full resource name is //SERVICE/RELATIVE_NAME, e.g. //pubsub.googleapis.com/projects/p/topics/t", resource)
		}
	}
	if err := checkResource(rel); err != nil {
		return route{}, "", err
	}
	if host == "" {
		for pattern, h := range shortNames {
			if matches(pattern, rel) {
				host = h
			}
		}
		if host == "" {
			if hint := suggestResource("", rel); hint != "" {
				return route{}, "", usagef("--resource %q: did you mean %s?", resource, hint)
			}
			return route{}, "", usagef("--resource %q: give the full resource name, //SERVICE/%s (such as //pubsub.googleapis.com/%s), so the policy is asked of the service that owns it; %s",
				resource, rel, rel, supportedServices())
		}
	}
	hostKnown := false
	for _, r := range routes {
		if r.host != host {
			continue
		}
		hostKnown = true
		for _, p := range r.patterns {
			if matches(p, rel) {
				return r, rel, nil
			}
		}
	}
	if hostKnown {
		if hint := suggestResource(host, rel); hint != "" {
			return route{}, "", usagef("--resource %q: did you mean //%s/%s?", resource, host, hint)
		}
		var shapes []string
		for _, r := range routes {
			if r.host == host {
				shapes = append(shapes, r.patterns...)
			}
		}
		return route{}, "", usagef("--resource %q: %s serves IAM policies of %s here", resource, host, strings.Join(shapes, ", "))
	}
	return route{}, "", usagef("--resource %q: this command does not reach %s; in Go, hand policy.NewUpdater that service's own GAPIC client (cloud.google.com/go/...), which meets policy.Client as it is; %s",
		resource, host, supportedServices())
}

// suggestResource is the known form that rel is one letter off in each
// collection name where it differs (project/p: projects/p), among the
// forms of host's routes, or of the names that need no service when host
// is ""; "" when there is none.
func suggestResource(host, rel string) string {
	var forms []string
	if host == "" {
		for pattern := range shortNames {
			forms = append(forms, pattern)
		}
	} else {
		for _, r := range routes {
			if r.host == host {
				forms = append(forms, r.patterns...)
			}
		}
	}
	slices.Sort(forms)
	parts := strings.Split(rel, "/")
	for _, form := range forms {
		ps := strings.Split(form, "/")
		if len(ps) != len(parts) {
			continue
		}
		fixed, off := slices.Clone(parts), 0
		for i, p := range ps {
			switch {
			case p == "*" || p == parts[i]:
			case oneEditApart(p, parts[i]):
				fixed[i] = p
				off++
			default:
				off = -len(ps)
			}
		}
		if off > 0 {
			return strings.Join(fixed, "/")
		}
	}
	return ""
}

// oneEditApart reports whether a and b differ by one letter: one
// replaced, added or dropped.
func oneEditApart(a, b string) bool {
	if len(a) < len(b) {
		a, b = b, a
	}
	switch len(a) - len(b) {
	case 0:
		d := 0
		for i := range len(a) {
			if a[i] != b[i] {
				d++
			}
		}
		return d == 1
	case 1:
		i := 0
		for i < len(b) && a[i] == b[i] {
			i++
		}
		return a[i+1:] == b[i:]
	}
	return false
}

func supportedServices() string {
	var hs []string
	seen := map[string]bool{}
	for _, r := range routes {
		if !seen[r.host] {
			seen[r.host] = true
			hs = append(hs, r.host)
		}
	}
	return "services reached: " + strings.Join(hs, ", ")
}

// dial connects to the route's endpoint (or --endpoint), with the
// interceptor chain: Application Default Credentials and TLS, or neither
// with --insecure.
func (r route) dial(ctx context.Context, f *policyFlags, chain grpc.UnaryClientInterceptor) (*grpc.ClientConn, error) {
	opts := []option.ClientOption{
		option.WithEndpoint(r.endpoint),
		option.WithScopes("https://www.googleapis.com/auth/cloud-platform"),
		option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(chain)),
	}
	if f.endpoint != "" {
		opts = append(opts, option.WithEndpoint(f.endpoint))
	}
	if f.insecure {
		opts = append(opts, option.WithoutAuthentication(),
			option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
	}
	return gtransport.Dial(ctx, opts...)
}

// String names the route for messages: "pubsub.googleapis.com:443 google.iam.v1.IAMPolicy".
func (r route) String() string { return fmt.Sprintf("%s %s", r.endpoint, r.grpcService) }
