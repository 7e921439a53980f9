package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/beangate/beangate/gateway/console"
)

// apiClient speaks a beangate console's JSON API (gateway/console).
type apiClient struct {
	o    *options
	base string
	http *http.Client
	csrf string
}

// errNoAPI is what list, flush and move say without --api.
var errNoAPI = fmt.Errorf("needs a beangate's ops listener (--api URL)")

func (o *options) apiClient() (*apiClient, bool) {
	if o.api == "" {
		return nil, false
	}
	return &apiClient{o: o, base: strings.TrimSuffix(o.api, "/"), http: &http.Client{Timeout: 10 * time.Minute, Transport: o.tls.httpTransport()}}, true
}

func (a *apiClient) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, body)
	if err != nil {
		return err
	}
	switch {
	case a.o.password != "":
		req.SetBasicAuth(a.o.user, a.o.password)
	case a.o.token != "":
		req.Header.Set("Authorization", "Bearer "+a.o.token)
	}
	if method == http.MethodPost {
		if a.csrf == "" && path != "/api/info" {
			var info console.Info
			if err := a.do(ctx, http.MethodGet, "/api/info", nil, &info); err != nil {
				return err
			}
			a.csrf = info.CSRF
		}
		req.Header.Set("X-CSRF-Token", a.csrf)
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := a.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if err := plainToHTTPS(res, a.base); err != nil {
		return err
	}
	if res.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("%s %s: %w", method, path, errAPIUnauthorized)
	}
	if res.StatusCode != http.StatusOK {
		var e struct{ Error string }
		_ = json.NewDecoder(res.Body).Decode(&e)
		return fmt.Errorf("%s %s: %s: %s", method, path, res.Status, e.Error)
	}
	return json.NewDecoder(res.Body).Decode(out)
}

func (a *apiClient) get(ctx context.Context, path string, q url.Values, out any) error {
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return a.do(ctx, http.MethodGet, path, nil, out)
}

func (a *apiClient) post(ctx context.Context, path string, in console.Action) (console.Result, error) {
	var r console.Result
	return r, a.do(ctx, http.MethodPost, path, in, &r)
}
