// Package noimport does not use iamretry: its clients are not reported.
package noimport

import (
	"context"

	admin "cloud.google.com/go/iam/admin/apiv1"
)

func build(ctx context.Context) (*admin.IamClient, error) { return admin.NewIamClient(ctx) }
