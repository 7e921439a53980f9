package gateway

import (
	"crypto/tls"
	"net"
	"time"
)

// admit applies the connection limits to a connection just accepted: beyond them it is closed
// at once and counted. gated reports that it counts as handshaking (TLS or auth on) until its
// handshake and auth are done.
func (s *Server) admit(nc net.Conn) (gated, ok bool) {
	if limit := s.cfg.MaxConnections; limit > 0 && s.open.Load() >= int64(limit) {
		s.reject(nc, RejectMaxConnections)
		return false, false
	}
	gated = s.cfg.TLS != nil || s.authRequired()
	if gated {
		if limit := s.cfg.MaxHandshaking; limit > 0 && s.handshaking.Load() >= int64(limit) {
			s.reject(nc, RejectHandshakeLimit)
			return false, false
		}
		s.handshaking.Add(1)
		// The whole handshake and auth must fit in the timeout; cleared once done. Writes are
		// bounded only while the TLS handshake runs (auth's replies are small).
		deadline := time.Now().Add(s.cfg.HandshakeTimeout)
		if s.cfg.TLS != nil {
			_ = nc.SetDeadline(deadline)
		} else {
			_ = nc.SetReadDeadline(deadline)
		}
	}
	s.open.Add(1)
	return gated, true
}

func (s *Server) reject(nc net.Conn, why Rejection) {
	s.stats.rejected[why].Add(1)
	_ = nc.Close()
}

// drop closes an admitted connection that will not be served.
func (s *Server) drop(nc net.Conn, gated bool) {
	_ = nc.Close()
	s.open.Add(-1)
	if gated {
		s.handshaking.Add(-1)
	}
}

// handshake runs the TLS handshake of nc on its own goroutine (under the handshake deadline
// admit set) and serves it if it succeeds. With auth off the connection stops counting as
// handshaking here; with auth on, once it authenticates.
func (s *Server) handshake(nc net.Conn, gated bool) {
	defer s.connWG.Done()
	tc := tls.Server(nc, s.cfg.TLS)
	err := tc.Handshake()
	s.mu.Lock()
	delete(s.pending, nc)
	s.mu.Unlock()
	if err != nil {
		if !s.isClosed() {
			s.stats.rejected[RejectTLSHandshake].Add(1)
		}
		s.drop(nc, gated)
		return
	}
	_ = nc.SetWriteDeadline(time.Time{})
	if !s.authRequired() {
		_ = nc.SetReadDeadline(time.Time{})
		s.handshaking.Add(-1)
		gated = false
	}
	s.start(tc, gated)
}
