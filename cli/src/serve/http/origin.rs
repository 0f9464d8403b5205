//! The `Host` and `Origin` checks against DNS rebinding, and the CORS headers a preflight
//! of an allowed page gets.

use hyper::header::{self, HeaderMap, HeaderValue};

use crate::exit::Failure;
use crate::serve::config::Http;

/// The `Host` and `Origin` checks against DNS rebinding (MCP: an invalid Origin gets 403).
pub(super) struct Checks {
    /// `None`: any Host (`--allowed-host '*'`).
    hosts: Option<Vec<(String, Option<u16>)>>,
    origins: Vec<OriginRule>,
    /// The server listens on a loopback address only: pages served from this machine's
    /// own loopback names (`http://localhost:6274`, the MCP Inspector) may call it. A
    /// rebinding page cannot have such an origin: its origin is the attacker's name.
    loopback_origins: bool,
}

/// `scheme://host:port`, port `None` = any (`:*`).
#[derive(Debug, PartialEq)]
struct OriginRule {
    scheme: String,
    host: String,
    port: Option<u16>,
}

/// Host names always accepted: a request with one of them reached a loopback address by
/// its own name, which a rebinding page cannot produce.
const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

impl Checks {
    pub(super) fn new(opts: &Http, loopback_origins: bool) -> Result<Checks, Failure> {
        let hosts = if opts.allowed_host.iter().any(|h| h.trim() == "*") {
            None
        } else {
            let mut hosts: Vec<(String, Option<u16>)> =
                LOOPBACK.iter().map(|h| (h.to_string(), None)).collect();
            for h in &opts.allowed_host {
                hosts.push(parse_authority(h).ok_or_else(|| {
                    Failure::usage(format!("--allowed-host `{h}`: expected HOST or HOST:PORT"))
                })?);
            }
            Some(hosts)
        };
        let origins = opts
            .allowed_origin
            .iter()
            .map(|o| {
                parse_origin(o, true).ok_or_else(|| {
                    Failure::usage(format!(
                        "--allowed-origin `{o}`: expected SCHEME://HOST[:PORT] (PORT may be *), e.g. https://app.example.com"
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Checks {
            hosts,
            origins,
            loopback_origins,
        })
    }

    pub(super) fn check(&self, headers: &HeaderMap) -> Result<(), String> {
        // Two Host (or Origin) headers: which one would a proxy in front have checked?
        if headers.get_all(header::HOST).iter().count() > 1
            || headers.get_all(header::ORIGIN).iter().count() > 1
        {
            return Err("Forbidden: more than one Host or Origin header".into());
        }
        if let Some(hosts) = &self.hosts {
            let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
            let Some((name, port)) = host.and_then(parse_authority) else {
                return Err("Forbidden: no valid Host header".into());
            };
            if !hosts
                .iter()
                .any(|(h, p)| *h == name && (p.is_none() || *p == port))
            {
                return Err(format!(
                    "Forbidden: Host `{}` is not allowed (toolbind serve --allowed-host)",
                    host.unwrap_or_default()
                ));
            }
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let text = origin.to_str().unwrap_or("?");
            // Loopback pages, when the request also came by a loopback name: not through
            // a proxy that serves this server under another name (`--allowed-host`).
            let loopback_host = headers
                .get(header::HOST)
                .and_then(|v| v.to_str().ok())
                .and_then(parse_authority)
                .is_some_and(|(h, _)| LOOPBACK.contains(&h.as_str()));
            let allowed = parse_origin(text, false).is_some_and(|o| {
                (self.loopback_origins
                    && loopback_host
                    && matches!(o.scheme.as_str(), "http" | "https")
                    && LOOPBACK.contains(&o.host.as_str()))
                    || self.origins.iter().any(|r| {
                        r.scheme == o.scheme
                            && r.host == o.host
                            && (r.port.is_none() || r.port == o.port)
                    })
            });
            if !allowed {
                return Err(format!(
                    "Forbidden: Origin `{text}` is not allowed (toolbind serve --allowed-origin{})",
                    if self.loopback_origins {
                        ""
                    } else {
                        "; loopback origins are accepted only by a server listening on a loopback address"
                    }
                ));
            }
        }
        Ok(())
    }
}

/// `host` or `host:port` (`[v6]:port`), the host lower-cased and without brackets.
fn parse_authority(s: &str) -> Option<(String, Option<u16>)> {
    let a: hyper::http::uri::Authority = s.trim().parse().ok()?;
    if a.as_str().contains('@') {
        return None;
    }
    let host = a.host().trim_matches(['[', ']']).to_ascii_lowercase();
    (!host.is_empty()).then_some((host, a.port_u16()))
}

/// `scheme://host[:port]`; the port defaults to the scheme's; `:*` (only when `rule`)
/// means any port.
fn parse_origin(s: &str, rule: bool) -> Option<OriginRule> {
    let s = s.trim().trim_end_matches('/');
    let (scheme, rest) = s.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let (rest, any) = match rest.strip_suffix(":*") {
        Some(r) if rule => (r, true),
        _ => (rest, false),
    };
    if rest.contains(['/', '?', '#']) {
        return None;
    }
    let (host, port) = parse_authority(rest)?;
    let port = if any {
        None
    } else {
        port.or(match scheme.as_str() {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        })
    };
    Some(OriginRule { scheme, host, port })
}

/// The request headers MCP clients send, which a preflight may ask for.
const CORS_HEADERS: &str = "authorization, content-type, accept, mcp-session-id, \
     mcp-protocol-version, last-event-id, mcp-method, mcp-name";

/// The most `Mcp-Param-*` names a preflight's answer allows (a tool call mirrors one per
/// annotated argument; the rest of a longer list is left out, and the browser refuses
/// those headers).
const CORS_PARAM_HEADERS: usize = 32;

/// `Access-Control-Allow-Headers` for a preflight: the headers MCP uses, plus the
/// `Mcp-Param-*` headers the preflight asks for (2026-07-28 clients mirror tool arguments
/// into them, one name per argument, so they cannot be listed ahead), at most
/// [`CORS_PARAM_HEADERS`]. Never `*`, and never another header the page asks for: the
/// browser then refuses to send it. The preflight needs no token: its cost stays linear
/// in the request.
pub(super) fn cors_allow_headers(headers: &HeaderMap) -> HeaderValue {
    let mut allowed = CORS_HEADERS.to_owned();
    let mut params = std::collections::BTreeSet::new();
    let asked = headers
        .get_all(header::ACCESS_CONTROL_REQUEST_HEADERS)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|h| h.trim().to_ascii_lowercase());
    for h in asked {
        if params.len() == CORS_PARAM_HEADERS {
            break;
        }
        let param = h
            .strip_prefix("mcp-param-")
            .is_some_and(|rest| !rest.is_empty());
        if param && hyper::header::HeaderName::from_bytes(h.as_bytes()).is_ok() {
            params.insert(h);
        }
    }
    for h in params {
        allowed.push_str(", ");
        allowed.push_str(&h);
    }
    HeaderValue::from_str(&allowed).unwrap_or(HeaderValue::from_static(CORS_HEADERS))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn checks(hosts: &[&str], origins: &[&str]) -> Checks {
        checks_on(hosts, origins, false)
    }

    fn checks_on(hosts: &[&str], origins: &[&str], loopback: bool) -> Checks {
        Checks::new(
            &Http {
                addr: "127.0.0.1:0".into(),
                auth_token_file: None,
                allowed_host: hosts.iter().map(|s| s.to_string()).collect(),
                allowed_origin: origins.iter().map(|s| s.to_string()).collect(),
                stateless: false,
                max_sessions: 1,
                drain_timeout: std::time::Duration::from_secs(20),
            },
            loopback,
        )
        .unwrap()
    }

    #[test]
    fn hosts_are_loopback_or_allowed() {
        let c = checks(&["tools.example.com", "lb.internal:8080"], &[]);
        for ok in [
            "localhost:3000",
            "127.0.0.1",
            "[::1]:80",
            "Tools.Example.com",
            "tools.example.com:443",
            "lb.internal:8080",
        ] {
            assert!(c.check(&headers(&[("host", ok)])).is_ok(), "{ok}");
        }
        for bad in [
            "evil.example",
            "lb.internal:9090",
            "127.0.0.2",
            "user@localhost",
        ] {
            assert!(c.check(&headers(&[("host", bad)])).is_err(), "{bad}");
        }
        assert!(c.check(&HeaderMap::new()).is_err());
        assert!(
            checks(&["*"], &[])
                .check(&headers(&[("host", "evil.example")]))
                .is_ok()
        );
    }

    #[test]
    fn origins_must_be_allowed_when_present() {
        let c = checks(&[], &["https://app.example.com", "http://localhost:*"]);
        let with = |o: &str| headers(&[("host", "localhost"), ("origin", o)]);
        assert!(c.check(&headers(&[("host", "localhost")])).is_ok());
        for ok in [
            "https://app.example.com",
            "https://app.example.com:443",
            "http://localhost:6274",
            "http://LOCALHOST",
        ] {
            assert!(c.check(&with(ok)).is_ok(), "{ok}");
        }
        for bad in [
            "https://app.example.com:8443",
            "http://app.example.com",
            "https://evil.example",
            "null",
            "https://localhost:6274",
        ] {
            assert!(c.check(&with(bad)).is_err(), "{bad}");
        }
        assert!(checks(&[], &[]).check(&with("http://localhost")).is_err());
    }

    #[test]
    fn a_loopback_server_accepts_loopback_origins_only() {
        let c = checks_on(&[], &[], true);
        let with = |o: &str| headers(&[("host", "127.0.0.1:8080"), ("origin", o)]);
        for ok in [
            "http://localhost:6274",
            "http://127.0.0.1:8080",
            "https://localhost",
            "http://[::1]:3000",
            "http://LocalHost:1",
        ] {
            assert!(c.check(&with(ok)).is_ok(), "{ok}");
        }
        for bad in [
            "http://evil.example",
            "http://localhost.evil.example:6274",
            "http://127.0.0.2",
            "http://0.0.0.0:8080",
            "file://localhost",
            "null",
        ] {
            assert!(c.check(&with(bad)).is_err(), "{bad}");
        }
        // A foreign Host is refused whatever the Origin; an allowed non-loopback Host (a
        // proxy serving this server under a public name) does not make loopback pages
        // trusted.
        let evil = headers(&[("host", "evil.example"), ("origin", "http://localhost")]);
        assert!(c.check(&evil).is_err());
        let proxied = checks_on(&["tools.example.com"], &[], true);
        let public = headers(&[
            ("host", "tools.example.com"),
            ("origin", "http://localhost"),
        ]);
        assert!(proxied.check(&public).is_err());
        let local = headers(&[("host", "localhost:8080"), ("origin", "http://localhost")]);
        assert!(proxied.check(&local).is_ok());
        // Listening on all interfaces: loopback origins need --allowed-origin again.
        let wide = checks_on(&[], &[], false);
        let e = wide.check(&with("http://localhost:6274")).unwrap_err();
        assert!(e.contains("loopback address"), "{e}");
    }

    #[test]
    fn a_preflight_allows_a_bounded_set_of_mcp_param_headers() {
        let mut h = HeaderMap::new();
        let many: Vec<String> = (0..20_000).map(|i| format!("Mcp-Param-P{i}")).collect();
        h.insert(
            header::ACCESS_CONTROL_REQUEST_HEADERS,
            HeaderValue::from_str(&format!(
                "x-evil, *, MCP-PARAM-Region, mcp-param-, {}",
                many.join(",")
            ))
            .unwrap(),
        );
        let v = cors_allow_headers(&h);
        let allowed: Vec<&str> = v.to_str().unwrap().split(", ").collect();
        assert!(allowed.contains(&"mcp-param-region"), "{allowed:?}");
        assert!(allowed.contains(&"mcp-method") && allowed.contains(&"mcp-name"));
        for bad in ["x-evil", "*", "mcp-param-"] {
            assert!(!allowed.contains(&bad), "{bad}: {allowed:?}");
        }
        let params = allowed
            .iter()
            .filter(|a| a.starts_with("mcp-param-"))
            .count();
        assert_eq!(params, CORS_PARAM_HEADERS);
        // No preflight headers asked for: MCP's own.
        assert_eq!(cors_allow_headers(&HeaderMap::new()), CORS_HEADERS);
    }
}
