//! Where a Triton server listens, as the user writes it: `triton://host:port`.
//!
//! The scheme is required so a list can later hold other transports without guessing, and the
//! port is required because Triton's gRPC port (8001) differs from its HTTP one (8000): a
//! default would send a request to the wrong protocol and fail far from the typo. Every error
//! shows the expected form, and a list refuses the same server twice (it would get twice the
//! work and be counted twice when it fails).

use std::fmt;
use std::str::FromStr;

use crate::ClientError;

const SCHEME: &str = "triton://";
const FORM: &str = "expected triton://host:port, e.g. triton://gpu-a:8001";

/// One Triton server's gRPC address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Endpoint {
    /// A name, an IPv4 address, or an IPv6 address without its brackets.
    host: String,
    port: u16,
}

impl Endpoint {
    /// Reads one `triton://host:port` (an IPv6 host in brackets: `triton://[::1]:8001`).
    pub fn parse(text: &str) -> Result<Self, ClientError> {
        let bad = |why: &str| ClientError::Endpoint(format!("server `{text}`: {why}; {FORM}"));
        let trimmed = text.trim();
        let Some(rest) = trimmed
            .get(..SCHEME.len())
            .filter(|s| s.eq_ignore_ascii_case(SCHEME))
            .map(|_| &trimmed[SCHEME.len()..])
        else {
            return Err(bad(if trimmed.contains("://") {
                "the scheme must be triton://"
            } else {
                "the scheme triton:// is missing"
            }));
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains(['/', '?', '#']) {
            return Err(bad("a server address has no path"));
        }
        if rest.contains('@') {
            return Err(bad("a server address has no user name"));
        }
        let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
            let Some((host, after)) = v6.split_once(']') else {
                return Err(bad("the IPv6 address has no closing `]`"));
            };
            let Some(port) = after.strip_prefix(':') else {
                return Err(bad("the port is missing"));
            };
            if host.parse::<std::net::Ipv6Addr>().is_err() {
                return Err(bad(&format!("`{host}` is not an IPv6 address")));
            }
            (host, port)
        } else {
            let Some((host, port)) = rest.rsplit_once(':') else {
                return Err(bad("the port is missing"));
            };
            if host.contains(':') {
                return Err(bad(
                    "put an IPv6 address in brackets, e.g. triton://[::1]:8001",
                ));
            }
            (host, port)
        };
        if host.is_empty() {
            return Err(bad("the host is missing"));
        }
        if let Some(c) = host
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':')))
        {
            return Err(bad(&format!("`{c}` cannot appear in a host name")));
        }
        if port.is_empty() {
            return Err(bad("the port is missing"));
        }
        let port = port
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| bad(&format!("`{port}` is not a port (1–65535)")))?;
        Ok(Self {
            host: host.to_ascii_lowercase(),
            port,
        })
    }

    /// Reads a comma-separated list (`triton://a:8001,triton://b:8001`), refusing an empty list,
    /// empty entries and the same server twice.
    pub fn parse_list(text: &str) -> Result<Vec<Self>, ClientError> {
        if text.trim().is_empty() {
            return Err(ClientError::Endpoint(format!("no servers given; {FORM}")));
        }
        let mut out: Vec<Self> = Vec::new();
        for (i, item) in text.split(',').enumerate() {
            if item.trim().is_empty() {
                return Err(ClientError::Endpoint(format!(
                    "server {} of `{text}` is empty; give servers separated by commas, \
                     e.g. triton://a:8001,triton://b:8001",
                    i + 1
                )));
            }
            let endpoint = Self::parse(item)?;
            if out.contains(&endpoint) {
                return Err(ClientError::Endpoint(format!(
                    "server {endpoint} is given twice in `{text}`"
                )));
            }
            out.push(endpoint);
        }
        Ok(out)
    }

    #[must_use]
    pub fn host(&self) -> &str {
        &self.host
    }

    #[must_use]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The address gRPC dials (plain HTTP/2: Triton's gRPC port speaks cleartext by default).
    pub(crate) fn uri(&self) -> String {
        format!("http://{}", self.authority())
    }

    fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}", self.authority())
    }
}

impl FromStr for Endpoint {
    type Err = ClientError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        match Endpoint::parse(text) {
            Err(ClientError::Endpoint(e)) => e,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn good_forms() {
        let e = Endpoint::parse("triton://gpu-a:8001").expect("parses");
        assert_eq!((e.host(), e.port()), ("gpu-a", 8001));
        assert_eq!(e.to_string(), "triton://gpu-a:8001");
        assert_eq!(e.uri(), "http://gpu-a:8001");
        let e = Endpoint::parse(" TRITON://10.0.0.7:9001/ ").expect("parses");
        assert_eq!(e.to_string(), "triton://10.0.0.7:9001");
        let e = Endpoint::parse("triton://[::1]:8001").expect("parses");
        assert_eq!(e.host(), "::1");
        assert_eq!(e.to_string(), "triton://[::1]:8001");
        assert_eq!(e.uri(), "http://[::1]:8001");
        let list = Endpoint::parse_list("triton://a:8001, triton://b:8001").expect("parses");
        assert_eq!(
            list.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ["triton://a:8001", "triton://b:8001"]
        );
    }

    #[test]
    fn bad_forms_say_what_is_wrong_and_show_the_form() {
        for (text, why) in [
            ("gpu-a:8001", "the scheme triton:// is missing"),
            ("http://gpu-a:8001", "the scheme must be triton://"),
            ("triton://gpu-a", "the port is missing"),
            ("triton://gpu-a:", "the port is missing"),
            ("triton://:8001", "the host is missing"),
            ("triton://gpu-a:80x1", "`80x1` is not a port"),
            ("triton://gpu-a:70000", "`70000` is not a port"),
            ("triton://gpu-a:0", "`0` is not a port"),
            ("triton://gpu-a:8001/v2", "has no path"),
            ("triton://me@gpu-a:8001", "has no user name"),
            ("triton://gpu a:8001", "` ` cannot appear"),
            ("triton://::1:8001", "in brackets"),
            ("triton://[::1:8001", "no closing `]`"),
            ("triton://[nope]:8001", "`nope` is not an IPv6 address"),
        ] {
            let e = err(text);
            assert!(e.contains(why), "{text}: {e}");
            assert!(e.contains("expected triton://host:port"), "{text}: {e}");
            assert!(e.contains(text.trim()), "{text}: {e}");
        }
    }

    #[test]
    fn lists_refuse_duplicates_and_empty_entries() {
        let dup = Endpoint::parse_list("triton://a:8001,triton://A:8001").expect_err("duplicate");
        assert!(
            dup.to_string().contains("triton://a:8001 is given twice"),
            "{dup}"
        );
        let empty = Endpoint::parse_list("triton://a:8001,,triton://b:8001").expect_err("empty");
        assert!(empty.to_string().contains("server 2"), "{empty}");
        assert!(Endpoint::parse_list("  ").is_err());
        let bad = Endpoint::parse_list("triton://a:8001,b:8001").expect_err("bad second");
        assert!(bad.to_string().contains("`b:8001`"), "{bad}");
        // Different ports are different servers.
        assert_eq!(
            Endpoint::parse_list("triton://a:8001,triton://a:8002")
                .expect("parses")
                .len(),
            2
        );
    }
}
