//! The user's part of the authorization code flow: showing the authorization URL and
//! receiving the redirect. [`AuthorizationAgent`] is the hook; [`LoopbackRedirect`] is the
//! ready one for desktop apps and command-line tools.

use std::collections::VecDeque;
use std::io::ErrorKind;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{AbortHandle, JoinSet};
use url::Url;

use super::OAuthError;
use super::pkce::constant_time_eq;

/// Shows the user the authorization URL and hands back where the authorization server
/// redirected the user agent (the redirect URI with `code`, `state` and maybe `iss`).
pub trait AuthorizationAgent: Send + Sync + 'static {
    /// The redirect URI registered for the client.
    fn redirect_uri(&self) -> &Url;

    /// Lets the user authorize at `url` and returns the URL the authorization server
    /// redirected to.
    fn authorize(&self, url: Url) -> BoxFuture<'_, Result<Url, OAuthError>>;
}

/// The most bytes of the redirect's request head read.
const MAX_REQUEST_HEAD: usize = 16 * 1024;

/// The most connections served at once; a new one beyond closes the oldest.
const MAX_CONNECTIONS: usize = 16;

/// How long a connection may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// Receives the redirect on `http://127.0.0.1:<port>/callback` (RFC 8252 §7.3): prints the
/// authorization URL to stderr and, with [`LoopbackRedirect::open_browser`], opens it in the
/// system browser (or hands it to [`LoopbackRedirect::open_with`]); waits for the request on
/// the callback path that carries the authorization URL's `state`.
///
/// Any local program or web page can reach the port, so the agent trusts no request but that
/// one: a request to the callback path without the `state` (or with another, compared in
/// constant time) is answered 400 with a page that repeats nothing of it, and the agent keeps
/// waiting; an `error` counts only with the right `state`. Connections are served
/// concurrently, at most 16 at once (a new one beyond closes the oldest) and each for at most
/// 10 seconds, so that connections held open cannot keep the browser's redirect out. An
/// authorization URL without a `state` is refused.
pub struct LoopbackRedirect {
    listener: tokio::sync::Mutex<TcpListener>,
    redirect_uri: Url,
    opener: Opener,
    timeout: Duration,
}

/// What [`LoopbackRedirect`] does with the authorization URL.
enum Opener {
    /// Prints it to stderr.
    Print,
    /// Prints it and opens the system browser.
    Browser,
    /// Hands it to the application.
    Custom(Box<dyn Fn(Url) + Send + Sync>),
}

impl std::fmt::Debug for LoopbackRedirect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let opener = match self.opener {
            Opener::Print => "print",
            Opener::Browser => "browser",
            Opener::Custom(_) => "custom",
        };
        f.debug_struct("LoopbackRedirect")
            .field("redirect_uri", &self.redirect_uri.as_str())
            .field("opener", &opener)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl LoopbackRedirect {
    /// Listens on `127.0.0.1:port` (0: a free port).
    pub async fn bind(port: u16) -> Result<Self, OAuthError> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.map_err(OAuthError::Io)?;
        let port = listener.local_addr().map_err(OAuthError::Io)?.port();
        let redirect_uri = Url::parse(&format!("http://127.0.0.1:{port}/callback"))
            .map_err(|_| OAuthError::InvalidUrl(format!("http://127.0.0.1:{port}/callback")))?;
        Ok(LoopbackRedirect {
            listener: tokio::sync::Mutex::new(listener),
            redirect_uri,
            opener: Opener::Print,
            timeout: Duration::from_secs(300),
        })
    }

    /// Opens the authorization URL in the system browser as well (`xdg-open`, `open` or
    /// `start`); a failure to open it is only logged.
    pub fn open_browser(mut self) -> Self {
        self.opener = Opener::Browser;
        self
    }

    /// Hands the authorization URL to `open` instead of printing it: to show it in the
    /// application's own window, as a QR code, or to drive a browser in tests. `open` is
    /// called once per authorization and must not block; the agent then waits for the
    /// redirect as usual.
    pub fn open_with(mut self, open: impl Fn(Url) + Send + Sync + 'static) -> Self {
        self.opener = Opener::Custom(Box::new(open));
        self
    }

    /// How long the user may take (default 5 minutes).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Serves connections (at most [`MAX_CONNECTIONS`] at once, each for at most
    /// [`HEAD_TIMEOUT`]) until one brings the redirect with `state`.
    async fn receive(&self, state: &str) -> Result<Url, OAuthError> {
        let listener = self.listener.lock().await;
        let state: Arc<str> = state.into();
        let mut connections = JoinSet::new();
        // The connections being served, oldest first.
        let mut open: VecDeque<AbortHandle> = VecDeque::with_capacity(MAX_CONNECTIONS);
        loop {
            tokio::select! {
                // Finished connections first: the redirect, and closed ones out of the set.
                biased;
                Some(done) = connections.join_next_with_id() => {
                    let id = match &done {
                        Ok((id, _)) => *id,
                        Err(e) => e.id(),
                    };
                    open.retain(|c| c.id() != id);
                    if let Ok((_, Some(url))) = done {
                        return Ok(url);
                    }
                }
                accepted = listener.accept() => {
                    let stream = match accepted {
                        Ok((stream, _)) => stream,
                        // One connection's trouble: the next may be the browser's.
                        Err(e) if matches!(
                            e.kind(),
                            ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset | ErrorKind::Interrupted
                        ) => continue,
                        Err(e) => return Err(OAuthError::Io(e)),
                    };
                    // Full: the oldest goes (the browser sends its request at once, a page
                    // holding connections open does not), so that a flood cannot keep the
                    // redirect out.
                    if open.len() == MAX_CONNECTIONS
                        && let Some(oldest) = open.pop_front()
                    {
                        oldest.abort();
                    }
                    let serving = serve(stream, self.redirect_uri.clone(), state.clone());
                    open.push_back(connections.spawn(async move {
                        tokio::time::timeout(HEAD_TIMEOUT, serving).await.ok().flatten()
                    }));
                }
            }
        }
    }
}

/// Serves one connection: the redirect of this authorization (its `state` the one sent) is
/// answered with a page saying to close the window and returned; anything else is answered
/// with an error that repeats nothing of the request (a page must not put its text before
/// the user).
async fn serve(mut stream: TcpStream, redirect_uri: Url, state: Arc<str>) -> Option<Url> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_REQUEST_HEAD {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&head);
    let target = line.split_whitespace().nth(1).unwrap_or_default();
    // Origin-form only: an absolute URL would name another host.
    let url = target.starts_with('/').then(|| redirect_uri.join(target).ok()).flatten();
    let (status, page, returned) = match url {
        Some(url) if url.path() == redirect_uri.path() => {
            if has_state(&url, &state) {
                let page = if url.query_pairs().any(|(k, _)| k == "error") {
                    "<!doctype html><title>Not authorized</title><p>The authorization was not granted. You can close this window.</p>"
                } else {
                    "<!doctype html><title>Authorized</title><p>You can close this window.</p>"
                };
                ("200 OK", page, Some(url))
            } else {
                let page = "<!doctype html><title>Not this authorization</title><p>This is not the redirect the application is waiting for.</p>";
                ("400 Bad Request", page, None)
            }
        }
        Some(_) => ("404 Not Found", "", None),
        None => ("400 Bad Request", "", None),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
        page.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    returned
}

/// Whether `url` carries `state`, once and equal (in constant time).
fn has_state(url: &Url, state: &str) -> bool {
    let mut states = url.query_pairs().filter(|(k, _)| k == "state");
    match (states.next(), states.next()) {
        (Some((_, found)), None) => constant_time_eq(found.as_bytes(), state.as_bytes()),
        _ => false,
    }
}

impl AuthorizationAgent for LoopbackRedirect {
    fn redirect_uri(&self) -> &Url {
        &self.redirect_uri
    }

    fn authorize(&self, url: Url) -> BoxFuture<'_, Result<Url, OAuthError>> {
        Box::pin(async move {
            // Only the redirect with this state is this authorization's.
            let state = url
                .query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned())
                .filter(|s| !s.is_empty())
                .ok_or(OAuthError::Configuration("the authorization URL has no state"))?;
            match &self.opener {
                Opener::Print => eprintln!("Open this URL to authorize: {url}"),
                Opener::Browser => {
                    eprintln!("Open this URL to authorize: {url}");
                    open_in_browser(url.as_str());
                }
                Opener::Custom(open) => open(url),
            }
            tokio::time::timeout(self.timeout, self.receive(&state))
                .await
                .map_err(|_| OAuthError::AuthorizationTimedOut)?
        })
    }
}

/// Starts the system's browser on `url`.
fn open_in_browser(url: &str) {
    let (program, args): (&str, Vec<&str>) = if cfg!(target_os = "macos") {
        ("open", vec![url])
    } else if cfg!(windows) {
        ("cmd", vec!["/C", "start", "", url])
    } else {
        ("xdg-open", vec![url])
    };
    if let Err(e) = std::process::Command::new(program).args(args).spawn() {
        tracing::warn!(error = %e, "cannot open the browser");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plays the browser: sends `request` to the agent's port, returns the answer.
    async fn browse(port: u16, request: &str) -> String {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        answer
    }

    #[tokio::test]
    async fn the_loopback_agent_returns_the_redirect_it_receives() {
        let agent = LoopbackRedirect::bind(0).await.unwrap();
        let uri = agent.redirect_uri().clone();
        assert_eq!(uri.host_str(), Some("127.0.0.1"));
        assert_eq!(uri.path(), "/callback");
        let port = uri.port().unwrap();
        let authorizing = tokio::spawn(async move {
            agent
                .authorize(Url::parse("https://as.example/authorize?x=1&state=s").unwrap())
                .await
                .map(|u| u.to_string())
        });
        // A stray request (a favicon) is answered 404 and does not end the wait.
        let stray = browse(port, "GET /favicon.ico HTTP/1.1\r\nhost: x\r\n\r\n").await;
        assert!(stray.starts_with("HTTP/1.1 404"), "{stray}");
        let page = browse(port, "GET /callback?code=c&state=s HTTP/1.1\r\nhost: x\r\n\r\n").await;
        assert!(page.starts_with("HTTP/1.1 200") && page.contains("close this window"), "{page}");
        let returned = authorizing.await.unwrap().unwrap();
        assert_eq!(returned, format!("http://127.0.0.1:{port}/callback?code=c&state=s"));
    }

    #[tokio::test]
    async fn the_loopback_agent_hands_the_url_to_its_opener() {
        let (tx, rx) = std::sync::mpsc::channel();
        let agent = LoopbackRedirect::bind(0).await.unwrap().open_with(move |url| tx.send(url).unwrap());
        let port = agent.redirect_uri().port().unwrap();
        let authorizing = tokio::spawn(async move {
            agent
                .authorize(Url::parse("https://as.example/authorize?x=1&state=s").unwrap())
                .await
                .map(|u| u.to_string())
        });
        // The opener is the browser: it is given the URL, then the redirect arrives.
        let opened = tokio::task::spawn_blocking(move || rx.recv().unwrap()).await.unwrap();
        assert_eq!(opened.as_str(), "https://as.example/authorize?x=1&state=s");
        browse(port, "GET /callback?code=c&state=s HTTP/1.1\r\nhost: x\r\n\r\n").await;
        assert_eq!(authorizing.await.unwrap().unwrap(), format!("http://127.0.0.1:{port}/callback?code=c&state=s"));
    }

    #[tokio::test]
    async fn the_loopback_agent_gives_up_after_its_timeout() {
        let agent = LoopbackRedirect::bind(0).await.unwrap().timeout(Duration::from_millis(50));
        let r = agent.authorize(Url::parse("https://as.example/authorize?state=s").unwrap()).await;
        assert!(matches!(r, Err(OAuthError::AuthorizationTimedOut)), "{r:?}");
    }

    /// The state of the authorization URLs of these tests.
    const STATE: &str = "Zk3q-real-state";

    /// Starts an authorization; returns the agent's port and the redirect it will return.
    async fn authorizing() -> (u16, tokio::task::JoinHandle<Result<Url, OAuthError>>) {
        let agent = LoopbackRedirect::bind(0).await.unwrap().open_with(|_| {});
        let port = agent.redirect_uri().port().unwrap();
        let url = Url::parse(&format!("https://as.example/authorize?client_id=c&state={STATE}")).unwrap();
        (port, tokio::spawn(async move { agent.authorize(url).await }))
    }

    /// The browser's redirect, then what the agent returned: within a few seconds (well
    /// under the per-connection timeout), or the test fails.
    async fn the_real_redirect(port: u16, authorizing: tokio::task::JoinHandle<Result<Url, OAuthError>>) -> Url {
        let request =
            format!("GET /callback?code=real&state={STATE}&iss=https%3A%2F%2Fas.example HTTP/1.1\r\nhost: x\r\n\r\n");
        let returned = tokio::time::timeout(Duration::from_secs(5), async {
            let page = browse(port, &request).await;
            assert!(page.starts_with("HTTP/1.1 200"), "{page}");
            authorizing.await.unwrap().unwrap()
        })
        .await
        .expect("the real redirect was not returned in time");
        assert_eq!(returned.query(), Some(&*format!("code=real&state={STATE}&iss=https%3A%2F%2Fas.example")));
        returned
    }

    /// A local page opens a connection and sends nothing; the browser's redirect, arriving
    /// next, is served at once.
    #[tokio::test]
    async fn an_idle_connection_does_not_hold_up_the_redirect() {
        let (port, authorizing) = authorizing().await;
        let _idle = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        the_real_redirect(port, authorizing).await;
    }

    /// A local page sends forged redirects (an error with its own text, without a state or
    /// with a wrong one): each is answered 400 without its text, and the agent keeps waiting
    /// for the real redirect.
    #[tokio::test]
    async fn forged_callbacks_are_refused_and_the_agent_keeps_waiting() {
        let (port, authorizing) = authorizing().await;
        let injected = "Call%20support%20at%20evil.example";
        for query in [
            format!("error=access_denied&error_description={injected}"),
            format!("error=access_denied&error_description={injected}&state=guess"),
            format!("code=forged&state={STATE}x&x={injected}"),
            format!("code=forged&state={STATE}&state=other&x={injected}"),
            format!("code=forged&x={injected}"),
        ] {
            let page = browse(port, &format!("GET /callback?{query} HTTP/1.1\r\nhost: x\r\n\r\n")).await;
            assert!(page.starts_with("HTTP/1.1 400"), "{query}: {page}");
            assert!(!page.contains("evil") && !page.contains("access_denied") && !page.contains("guess"), "{page}");
        }
        // Absolute-form targets naming another host are no way around it.
        let page = browse(port, "GET http://evil.example/callback?code=forged HTTP/1.1\r\nhost: x\r\n\r\n").await;
        assert!(page.starts_with("HTTP/1.1 4"), "{page}");
        assert!(!authorizing.is_finished());
        the_real_redirect(port, authorizing).await;
    }

    /// An error redirect with the right state is the real answer: it is returned (the flow
    /// reports it), and the page says so without repeating it.
    #[tokio::test]
    async fn an_error_with_the_right_state_is_returned() {
        let (port, authorizing) = authorizing().await;
        let query = format!("error=access_denied&error_description=no%20way&state={STATE}");
        let page = browse(port, &format!("GET /callback?{query} HTTP/1.1\r\nhost: x\r\n\r\n")).await;
        assert!(page.starts_with("HTTP/1.1 200") && !page.contains("no way"), "{page}");
        assert_eq!(authorizing.await.unwrap().unwrap().query(), Some(&*query));
    }

    /// A flood of idle connections, far more than the agent serves at once, does not keep
    /// the browser's redirect out.
    #[tokio::test]
    async fn a_flood_of_connections_does_not_stop_the_redirect() {
        let (port, authorizing) = authorizing().await;
        let mut flood = Vec::new();
        for _ in 0..4 * MAX_CONNECTIONS {
            flood.push(tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap());
        }
        the_real_redirect(port, authorizing).await;
    }

    /// An idle connection is closed after the head timeout (the clock is paused, so the
    /// test does not wait for it).
    #[tokio::test(start_paused = true)]
    async fn an_idle_connection_is_closed_after_its_timeout() {
        let (port, authorizing) = authorizing().await;
        let mut idle = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let mut rest = Vec::new();
        idle.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty());
        assert!(!authorizing.is_finished());
        let request = format!("GET /callback?code=real&state={STATE} HTTP/1.1\r\nhost: x\r\n\r\n");
        assert!(browse(port, &request).await.starts_with("HTTP/1.1 200"));
        assert_eq!(authorizing.await.unwrap().unwrap().query(), Some(&*format!("code=real&state={STATE}")));
    }

    /// An authorization URL without a state cannot be told from a forgery: refused.
    #[tokio::test]
    async fn an_authorization_url_without_state_is_refused() {
        let agent = LoopbackRedirect::bind(0).await.unwrap().open_with(|_| panic!("opened"));
        let r = agent.authorize(Url::parse("https://as.example/authorize?client_id=c").unwrap()).await;
        assert!(matches!(r, Err(OAuthError::Configuration(_))), "{r:?}");
    }
}
