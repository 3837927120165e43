package pooler

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// The running configuration: SHOW CONFIG shows it, and RELOAD and the
// console's SET replace it (apply), all through the settings table
// (settings.go).

// showConfig lists the settings (key, value, default, changeable): every
// entry of the settings table, changeable when SET takes it.
func (p *Proxy) showConfig() *resultSet {
	rs := columns("key:t", "value:t", "default:t", "changeable:t")
	cfg := p.live.Load()
	for _, s := range settingTable {
		rs.add(s.ShowName(), s.showValue(cfg), s.Format(s.Default), yesNo(s.Change == Live))
	}
	return rs
}

// SettableKeys returns the keys the console's SET changes while running.
func SettableKeys() []string {
	var keys []string
	for _, s := range settingTable {
		if s.Change == Live {
			keys = append(keys, s.Name)
		}
	}
	slices.Sort(keys)
	return keys
}

// set is the console's SET: the key's new value is put into force as a
// RELOAD would (the next RELOAD reads the files again and wins). Keys that
// only a restart or a RELOAD changes, and unknown keys, are refused.
func (p *Proxy) set(key, value string) error {
	s := lookupShown(key)
	switch {
	case s == nil:
		return &adminError{code: "42704", msg: fmt.Sprintf("SET: unknown setting %q (changeable: %s)", key, strings.Join(SettableKeys(), ", "))}
	case s.Change != Live:
		return &adminError{code: "55P02", msg: fmt.Sprintf("SET %s: cannot be changed while running; change it in the config and restart (or RELOAD)", key)}
	}
	v, err := s.Parse(value)
	if err != nil {
		return &adminError{code: "22023", msg: fmt.Sprintf("SET %s: %v", key, err)}
	}
	cur := p.live.Load()
	next := cur.clone()
	s.Put(&next, v)
	return p.apply(cur, next, "SET")
}

// Reload re-reads the configuration through Config.Reload (the admin
// console's RELOAD; the command line calls it on SIGHUP) and applies what
// can change while running (see apply).
func (p *Proxy) Reload() error { return p.reload() }

// reload runs Config.Reload on a copy of the running configuration and
// applies what can change while running.
func (p *Proxy) reload() error {
	if p.cfg.Reload == nil {
		return &adminError{code: "55000", msg: "RELOAD: no config file to reload (start the proxy with --config or --pgbouncer-ini)"}
	}
	cur := p.live.Load()
	next := cur.clone()
	if err := p.cfg.Reload(&next); err != nil {
		return &adminError{code: "F0000", msg: "RELOAD failed: " + err.Error()}
	}
	return p.apply(cur, next.withDefaults(), "RELOAD")
}

// apply replaces the running configuration cur with one that takes from
// next (RELOAD's or SET's) every setting the table marks changeable, and
// the users and client certificates loaded from their files; a changed
// setting that needs a restart is logged and keeps its running value.
// what names the command in errors and logs.
func (p *Proxy) apply(cur *Config, next Config, what string) error {
	verb := strings.ToLower(what)
	for _, s := range settingTable {
		if s.Change == Restart {
			continue
		}
		if err := s.Check(s.Get(&next)); err != nil {
			return &adminError{code: "22023", msg: fmt.Sprintf("%s: %s: %v", what, s.Name, err)}
		}
	}
	snap := *cur
	var applied, restart []string
	for _, s := range settingTable {
		v := s.Get(&next)
		switch {
		case reflect.DeepEqual(v, s.Get(cur)):
		case s.Change != Restart:
			s.Put(&snap, v)
			applied = append(applied, s.ShowName()+"="+s.showValue(&snap))
		default:
			restart = append(restart, s.ShowName())
		}
	}
	if next.usesAuthQuery() != cur.usesAuthQuery() {
		restart = append(restart, "auth_user,auth_query,auth_dbname")
	}
	users := next.Users != nil && !maps.Equal(next.Users, cur.Users)
	if users {
		snap.Users = next.Users
	}
	tlsChanged := false
	if next.ClientTLSMode == cur.ClientTLSMode && next.ClientTLS != cur.ClientTLS {
		// New certificates and CAs, for the clients that connect from now.
		if err := next.checkClientTLS(); err != nil {
			p.log.Warn(verb+": client TLS settings not applied", "err", err)
			snap.ClientTLSCertFile, snap.ClientTLSKeyFile = cur.ClientTLSCertFile, cur.ClientTLSKeyFile
			snap.ClientTLSCAFile, snap.ClientTLSProtocols = cur.ClientTLSCAFile, cur.ClientTLSProtocols
		} else {
			snap.ClientTLS, tlsChanged = next.ClientTLS, true
		}
	}
	if !p.live.CompareAndSwap(cur, &snap) {
		return &adminError{code: "55000", msg: what + ": the configuration changed meanwhile (another RELOAD or SET); try again"}
	}

	if snap.MaxDBConnections != cur.MaxDBConnections || snap.MaxUserConnections != cur.MaxUserConnections ||
		!maps.Equal(snap.Databases, cur.Databases) {
		p.applyCaps()
	}
	if snap.PoolSize != cur.PoolSize || !maps.Equal(snap.Databases, cur.Databases) {
		for _, pl := range p.matchingPools("") {
			pl.resize(p.poolSize(pl.key.database))
		}
	}
	if len(applied) > 0 {
		p.log.Info(verb+": settings applied", "settings", strings.Join(applied, " "))
	}
	if users {
		p.auth.setUsers(snap.Users)
		for _, pl := range p.matchingPools("") {
			pw := p.serverPassword(pl.key.user)
			pl.lock()
			pl.password = pw
			pl.unlock()
		}
		p.log.Info(verb+": auth file applied", "users", len(snap.Users))
	}
	if tlsChanged {
		p.clientTLS.Store(serverTLS(snap.ClientTLSMode, snap.ClientTLS))
		p.log.Info(verb + ": client TLS certificates applied")
	}
	if len(restart) > 0 {
		p.log.Warn(verb+": settings changed that need a restart", "settings", strings.Join(restart, ","))
	}
	return nil
}

// sessionStateText is on_session_state as it runs: off without a
// classifier.
func sessionStateText(cfg Config) string {
	if cfg.Classifier == nil {
		return string(PolicyOff)
	}
	return string(cfg.OnSessionState)
}

// clone returns a copy of c whose lists and maps are its own, so that
// changing it leaves c, a snapshot others read, as it is.
func (c *Config) clone() Config {
	d := *c
	d.AdminUsers = slices.Clone(c.AdminUsers)
	d.StatsUsers = slices.Clone(c.StatsUsers)
	d.TrustedRoutines = slices.Clone(c.TrustedRoutines)
	d.Databases = maps.Clone(c.Databases)
	d.Users = maps.Clone(c.Users)
	d.Peers = maps.Clone(c.Peers)
	return d
}
