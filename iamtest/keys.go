package iamtest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Service account keys beyond CreateServiceAccountKey: List, Get with the
// public key formats, Delete, Disable, Enable, Upload.

// signingKey is the one RSA key behind every public key the fake shows for
// the keys it mints: made once per process, on first use, as the fake keeps
// no private key a caller could use.
var signingKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic("iamtest: generating an RSA key: " + err.Error())
	}
	return k
})

// mintedCertPEM returns a self-signed X.509 certificate (PEM) for a minted
// key: what GetServiceAccountKey answers for TYPE_X509_PEM_FILE.
func mintedCertPEM(k *adminpb.ServiceAccountKey) []byte {
	priv := signingKey()
	id := k.Name[strings.LastIndexByte(k.Name, '/')+1:]
	serial, _ := new(big.Int).SetString(id[:min(len(id), 15)], 16)
	if serial == nil {
		serial = big.NewInt(1)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: id},
		NotBefore:    k.GetValidAfterTime().AsTime(),
		NotAfter:     k.GetValidBeforeTime().AsTime(),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		panic("iamtest: making a certificate: " + err.Error())
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// splitKeyName splits projects/P/serviceAccounts/A/keys/K.
func splitKeyName(name string) (account, keyID string, err error) {
	account, keyID, ok := strings.Cut(name, "/keys/")
	if !ok || keyID == "" || strings.Contains(keyID, "/") {
		return "", "", status.Errorf(codes.InvalidArgument,
			"invalid key name %q: expected projects/PROJECT_ID/serviceAccounts/ACCOUNT/keys/KEY_ID", name)
	}
	return account, keyID, nil
}

// keyLocked finds a key by name. st.mu must be held.
func (st *state) keyLocked(name, perm string) (*account, int, error) {
	accName, keyID, err := splitKeyName(name)
	if err != nil {
		return nil, 0, err
	}
	acc, err := st.lookupAsLocked(accName, perm)
	if err != nil {
		return nil, 0, err
	}
	for i, k := range acc.keys {
		if strings.HasSuffix(k.Name, "/keys/"+keyID) {
			return acc, i, nil
		}
	}
	return nil, 0, status.Errorf(codes.NotFound, "Service account key %s does not exist.", name)
}

// listedKey is a key as List and Get show it: no private key material, and
// no public key data (Get adds it on request).
func listedKey(k *adminpb.ServiceAccountKey) *adminpb.ServiceAccountKey {
	c := proto.Clone(k).(*adminpb.ServiceAccountKey)
	c.PrivateKeyData = nil
	c.PrivateKeyType = adminpb.ServiceAccountPrivateKeyType_TYPE_UNSPECIFIED
	c.PublicKeyData = nil
	return c
}

// ListServiceAccountKeys lists an account's keys, oldest first, those of
// the key_types asked for (all when none is): "If no key type is provided,
// all keys are returned" (ListServiceAccountKeysRequest.key_types). The fake
// holds user-managed keys only. Lists carry no key material.
func (a *adminService) ListServiceAccountKeys(_ context.Context, req *adminpb.ListServiceAccountKeysRequest) (*adminpb.ListServiceAccountKeysResponse, error) {
	types := req.GetKeyTypes()
	seen := map[adminpb.ListServiceAccountKeysRequest_KeyType]bool{}
	for _, t := range types {
		if t == adminpb.ListServiceAccountKeysRequest_KEY_TYPE_UNSPECIFIED || seen[t] {
			return nil, status.Errorf(codes.InvalidArgument, "invalid key_types: %v is unspecified or repeated (\"Duplicate key types are not allowed\")", t)
		}
		seen[t] = true
	}
	st := a.s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	acc, err := st.lookupAsLocked(req.GetName(), "iam.serviceAccountKeys.list")
	if err != nil {
		return nil, err
	}
	resp := &adminpb.ListServiceAccountKeysResponse{}
	for _, k := range acc.keys {
		if len(types) == 0 || seen[k.KeyType] {
			resp.Keys = append(resp.Keys, listedKey(k))
		}
	}
	return resp, nil
}

// GetServiceAccountKey answers a key with its public key in the format asked
// for: none (TYPE_NONE, the default: "the public key is not returned"), an
// X.509 certificate in PEM (TYPE_X509_PEM_FILE) or the DER of the public key
// (TYPE_RAW_PUBLIC_KEY).
func (a *adminService) GetServiceAccountKey(_ context.Context, req *adminpb.GetServiceAccountKeyRequest) (*adminpb.ServiceAccountKey, error) {
	format := req.GetPublicKeyType()
	switch format {
	case adminpb.ServiceAccountPublicKeyType_TYPE_NONE, adminpb.ServiceAccountPublicKeyType_TYPE_X509_PEM_FILE, adminpb.ServiceAccountPublicKeyType_TYPE_RAW_PUBLIC_KEY:
	default:
		return nil, status.Errorf(codes.InvalidArgument, "invalid public_key_type %v", format)
	}
	if format != adminpb.ServiceAccountPublicKeyType_TYPE_NONE {
		signingKey() // made once, outside the store's lock
	}
	st := a.s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	acc, i, err := st.keyLocked(req.GetName(), "iam.serviceAccountKeys.get")
	if err != nil {
		return nil, err
	}
	k := acc.keys[i]
	out := listedKey(k)
	if format == adminpb.ServiceAccountPublicKeyType_TYPE_NONE {
		return out, nil
	}
	if len(k.PublicKeyData) == 0 { // minted: its certificate is made on first demand
		k.PublicKeyData = mintedCertPEM(k)
	}
	if format == adminpb.ServiceAccountPublicKeyType_TYPE_X509_PEM_FILE {
		out.PublicKeyData = append([]byte(nil), k.PublicKeyData...)
		return out, nil
	}
	block, _ := pem.Decode(k.PublicKeyData)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "iamtest: stored certificate: %v", err)
	}
	out.PublicKeyData, _ = x509.MarshalPKIXPublicKey(cert.PublicKey)
	return out, nil
}

// DeleteServiceAccountKey removes a key, which frees one of the account's
// maxUserManagedKeys slots.
func (a *adminService) DeleteServiceAccountKey(_ context.Context, req *adminpb.DeleteServiceAccountKeyRequest) (*emptypb.Empty, error) {
	st := a.s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	acc, i, err := st.keyLocked(req.GetName(), "iam.serviceAccountKeys.delete")
	if err != nil {
		return nil, err
	}
	acc.keys = append(acc.keys[:i:i], acc.keys[i+1:]...)
	return &emptypb.Empty{}, nil
}

// setKeyDisabled implements Disable and EnableServiceAccountKey (idempotent).
func (a *adminService) setKeyDisabled(name, perm string, disabled bool) (*emptypb.Empty, error) {
	st := a.s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	acc, i, err := st.keyLocked(name, perm)
	if err != nil {
		return nil, err
	}
	k := proto.Clone(acc.keys[i]).(*adminpb.ServiceAccountKey)
	k.Disabled = disabled
	acc.keys[i] = k
	return &emptypb.Empty{}, nil
}

// DisableServiceAccountKey marks a key disabled.
func (a *adminService) DisableServiceAccountKey(_ context.Context, req *adminpb.DisableServiceAccountKeyRequest) (*emptypb.Empty, error) {
	return a.setKeyDisabled(req.GetName(), "iam.serviceAccountKeys.disable", true)
}

// EnableServiceAccountKey marks a key enabled.
func (a *adminService) EnableServiceAccountKey(_ context.Context, req *adminpb.EnableServiceAccountKeyRequest) (*emptypb.Empty, error) {
	return a.setKeyDisabled(req.GetName(), "iam.serviceAccountKeys.enable", false)
}

// UploadServiceAccountKey associates an uploaded public key with an account:
// public_key_data "Must be an RSA public key that is wrapped in an X.509 v3
// certificate" in PEM (UploadServiceAccountKeyRequest). The key counts
// against maxUserManagedKeys, its origin is USER_PROVIDED and its validity
// that of the certificate. Uploading a certificate the account already has
// answers ALREADY_EXISTS; SetKeyCreationDisabled refuses uploads too.
func (a *adminService) UploadServiceAccountKey(_ context.Context, req *adminpb.UploadServiceAccountKeyRequest) (*adminpb.ServiceAccountKey, error) {
	block, _ := pem.Decode(req.GetPublicKeyData())
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, status.Error(codes.InvalidArgument, "invalid public_key_data: expected an X.509 certificate in PEM, from -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "invalid public_key_data: %v", err)
	}
	if _, ok := cert.PublicKey.(*rsa.PublicKey); !ok {
		return nil, status.Error(codes.InvalidArgument, "invalid public_key_data: the certificate's key is not an RSA key")
	}
	// SetKeyCreationDisabled does not apply: uploads are governed by a
	// constraint of their own, iam.disableServiceAccountKeyUpload.
	keyLimitQuota := a.s.fid().keyLimitQuota
	st := a.s.state
	st.mu.Lock()
	defer st.mu.Unlock()
	acc, err := st.lookupAsLocked(req.GetName(), "iam.serviceAccountKeys.upload")
	if err != nil {
		return nil, err
	}
	sum := sha1.Sum(block.Bytes)
	keyID := hex.EncodeToString(sum[:])
	for _, k := range acc.keys {
		if strings.HasSuffix(k.Name, "/keys/"+keyID) {
			return nil, status.Errorf(codes.AlreadyExists, "Service account key %s already exists.", k.Name)
		}
	}
	if len(acc.keys) >= maxUserManagedKeys {
		return nil, keyLimitReached(keyLimitQuota)
	}
	alg := adminpb.ServiceAccountKeyAlgorithm_KEY_ALG_RSA_2048
	if cert.PublicKey.(*rsa.PublicKey).N.BitLen() < 2048 {
		alg = adminpb.ServiceAccountKeyAlgorithm_KEY_ALG_RSA_1024
	}
	key := &adminpb.ServiceAccountKey{
		Name:            acc.sa.Name + "/keys/" + keyID,
		KeyAlgorithm:    alg,
		PublicKeyData:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: block.Bytes}),
		ValidAfterTime:  timestamppb.New(cert.NotBefore.UTC().Truncate(time.Second)),
		ValidBeforeTime: timestamppb.New(cert.NotAfter.UTC().Truncate(time.Second)),
		KeyOrigin:       adminpb.ServiceAccountKeyOrigin_USER_PROVIDED,
		KeyType:         adminpb.ListServiceAccountKeysRequest_USER_MANAGED,
	}
	acc.keys = append(acc.keys, key)
	return listedKey(key), nil
}
