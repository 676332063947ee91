//! How the OAuth client talks to authorization servers and fetches metadata: one HTTP client
//! for all of it, which follows no redirect across origins (a form re-sent on a 307 would
//! carry a code verifier, a refresh token or a client secret to another host), gives every
//! request a time limit (a stalled endpoint must not hold the flow), requires HTTPS of
//! authorization server endpoints except on loopback (the specification's security
//! considerations), and, when asked, refuses private, loopback and link-local addresses (for a
//! client hosted where such addresses reach internal services).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use url::{Host, Url};

use super::{OAuthConfig, OAuthError};

/// The most redirects followed (within one origin) for one request.
const MAX_REDIRECTS: usize = 5;

/// The HTTP side of an [`OAuthClient`](super::OAuthClient).
#[derive(Clone)]
pub(crate) struct OAuthHttp {
    client: reqwest::Client,
    timeout: Duration,
    deny_private: bool,
}

impl OAuthHttp {
    /// The client `config` asks for: its own [`OAuthConfig::http_client`], or one built here.
    pub(crate) fn new(config: &OAuthConfig) -> OAuthHttp {
        let client = config.http.clone().unwrap_or_else(|| build(config));
        OAuthHttp { client, timeout: config.http_timeout, deny_private: config.deny_private }
    }

    /// A GET of `url`, once `url` may be asked.
    pub(crate) fn get(&self, url: &Url) -> Result<reqwest::RequestBuilder, OAuthError> {
        self.admit(url)?;
        Ok(self.client.get(url.clone()).timeout(self.timeout))
    }

    /// A POST to `url` (an authorization server endpoint), once it may be asked.
    pub(crate) fn post(&self, url: &Url) -> Result<reqwest::RequestBuilder, OAuthError> {
        require_https(url)?;
        self.admit(url)?;
        Ok(self.client.post(url.clone()).timeout(self.timeout))
    }

    /// Sends `request` to `url`; refuses an answer that came from another origin (a client
    /// given by the application may follow redirects anywhere).
    pub(crate) async fn send(
        &self,
        request: reqwest::RequestBuilder,
        url: &Url,
    ) -> Result<reqwest::Response, OAuthError> {
        let response = request.send().await.map_err(|e| OAuthError::Http { url: url.to_string(), source: e })?;
        if response.url().origin() != url.origin() {
            return Err(OAuthError::Redirected { url: url.to_string() });
        }
        Ok(response)
    }

    /// Whether `url` may be asked at all: an http or https URL, and not a private address when
    /// those are refused (names are checked again when they resolve).
    fn admit(&self, url: &Url) -> Result<(), OAuthError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(OAuthError::InsecureUrl(url.to_string()));
        }
        if self.deny_private {
            let private = match url.host() {
                Some(Host::Ipv4(ip)) => is_private(IpAddr::V4(ip)),
                Some(Host::Ipv6(ip)) => is_private(IpAddr::V6(ip)),
                Some(Host::Domain(name)) => is_loopback_name(name),
                None => true,
            };
            if private {
                return Err(OAuthError::PrivateAddress(url.to_string()));
            }
        }
        Ok(())
    }
}

/// The specification requires every authorization server endpoint to be HTTPS; plain HTTP is
/// accepted on loopback only (a local authorization server, tests).
pub(crate) fn require_https(url: &Url) -> Result<(), OAuthError> {
    match url.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(url) => Ok(()),
        _ => Err(OAuthError::InsecureUrl(url.to_string())),
    }
}

/// Whether `url`'s host is the loopback interface: `localhost`, `127.0.0.0/8` or `::1`.
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        Some(Host::Domain(name)) => is_loopback_name(name),
        None => false,
    }
}

fn is_loopback_name(name: &str) -> bool {
    let name = name.trim_end_matches('.');
    name.eq_ignore_ascii_case("localhost") || name.to_ascii_lowercase().ends_with(".localhost")
}

/// Whether an address is one a hosted client must not be made to reach: loopback, private
/// (RFC 1918, unique local), link-local, shared (CGNAT), unspecified, broadcast, multicast,
/// documentation and benchmarking ranges; IPv4-mapped and -compatible IPv6 as their IPv4.
pub(crate) fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 198 && (b == 18 || b == 19))
                || a >= 240
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4() {
                return is_private(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || first == 0x2001 && v6.segments()[1] == 0x0db8
        }
    }
}

/// The client built for OAuth: redirects within the first URL's origin only, connect and
/// request time limits, and the private-address resolver when asked.
fn build(config: &OAuthConfig) -> reqwest::Client {
    let redirects = reqwest::redirect::Policy::custom(|attempt| {
        let same_origin = attempt.previous().first().is_some_and(|first| first.origin() == attempt.url().origin());
        if attempt.previous().len() > MAX_REDIRECTS || !same_origin { attempt.stop() } else { attempt.follow() }
    });
    let mut builder = reqwest::Client::builder()
        .connect_timeout(config.http_timeout.min(Duration::from_secs(10)))
        .timeout(config.http_timeout)
        .redirect(redirects);
    if config.deny_private {
        builder = builder.dns_resolver(Arc::new(PublicOnly));
    }
    builder.build().unwrap_or_default()
}

/// A resolver that hands reqwest only the public addresses of a name.
struct PublicOnly;

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let all: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let public: Vec<SocketAddr> = all.into_iter().filter(|a| !is_private(a.ip())).collect();
            if public.is_empty() {
                let refused = format!("{host} resolves to private, loopback or link-local addresses only");
                return Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, refused).into());
            }
            Ok(Box::new(public.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_is_required_but_on_loopback() {
        let ok = |u: &str| require_https(&Url::parse(u).unwrap()).is_ok();
        assert!(ok("https://as.example/token"));
        assert!(ok("http://127.0.0.1:8080/token"));
        assert!(ok("http://127.9.9.9/token"));
        assert!(ok("http://localhost:3000/token"));
        assert!(ok("http://[::1]:3000/token"));
        assert!(!ok("http://as.example/token"));
        assert!(!ok("http://10.0.0.1/token"));
        assert!(!ok("http://localhost.evil.example/token"));
        assert!(!ok("ftp://as.example/token"));
    }

    #[test]
    fn private_addresses_are_recognised() {
        let private = |s: &str| is_private(s.parse().unwrap());
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "::1",
            "::",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
        ] {
            assert!(private(ip), "{ip}");
        }
        for ip in ["8.8.8.8", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8", "100.128.0.1"] {
            assert!(!private(ip), "{ip}");
        }
    }
}
