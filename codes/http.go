package codes

import grpccodes "google.golang.org/grpc/codes"

// httpStatus is the google.rpc.Code to HTTP mapping of
// google/rpc/code.proto, indexed by code.
var httpStatus = [...]int{
	grpccodes.OK:                 200,
	grpccodes.Canceled:           499,
	grpccodes.Unknown:            500,
	grpccodes.InvalidArgument:    400,
	grpccodes.DeadlineExceeded:   504,
	grpccodes.NotFound:           404,
	grpccodes.AlreadyExists:      409,
	grpccodes.PermissionDenied:   403,
	grpccodes.ResourceExhausted:  429,
	grpccodes.FailedPrecondition: 400,
	grpccodes.Aborted:            409,
	grpccodes.OutOfRange:         400,
	grpccodes.Unimplemented:      501,
	grpccodes.Internal:           500,
	grpccodes.Unavailable:        503,
	grpccodes.DataLoss:           500,
	grpccodes.Unauthenticated:    401,
}

// HTTPStatus returns the HTTP status code that Google APIs use for a gRPC
// code (the mapping of google.rpc.Code), for all 17 codes. A code outside
// them maps to 500, as Google's HTTP/JSON transcoding does for Unknown.
func HTTPStatus(code grpccodes.Code) int {
	if int(code) < len(httpStatus) {
		return httpStatus[code]
	}
	return 500
}
