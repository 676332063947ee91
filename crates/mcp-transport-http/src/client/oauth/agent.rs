//! The user's part of the authorization code flow: showing the authorization URL and
//! receiving the redirect. [`AuthorizationAgent`] is the hook; [`LoopbackRedirect`] is the
//! ready one for desktop apps and command-line tools.

use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;
use url::Url;

use super::OAuthError;

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

/// Receives the redirect on `http://127.0.0.1:<port>/callback` (RFC 8252 §7.3): prints the
/// authorization URL to stderr and, with [`LoopbackRedirect::open_browser`], opens it in the
/// system browser (or hands it to [`LoopbackRedirect::open_with`]); waits for one request on
/// the callback path.
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

    async fn receive(&self) -> Result<Url, OAuthError> {
        let listener = self.listener.lock().await;
        loop {
            let (mut stream, _) = listener.accept().await.map_err(OAuthError::Io)?;
            let mut head = Vec::new();
            let mut buf = [0u8; 2048];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_REQUEST_HEAD {
                let n = stream.read(&mut buf).await.map_err(OAuthError::Io)?;
                if n == 0 {
                    break;
                }
                head.extend_from_slice(&buf[..n]);
            }
            let line = String::from_utf8_lossy(&head);
            let target = line.split_whitespace().nth(1).unwrap_or_default();
            let Ok(url) = self.redirect_uri.join(target) else { continue };
            if url.path() != self.redirect_uri.path() {
                let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n").await;
                continue;
            }
            let body = "<!doctype html><title>Authorized</title><p>You can close this window.</p>";
            let response = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes()).await;
            return Ok(url);
        }
    }
}

impl AuthorizationAgent for LoopbackRedirect {
    fn redirect_uri(&self) -> &Url {
        &self.redirect_uri
    }

    fn authorize(&self, url: Url) -> BoxFuture<'_, Result<Url, OAuthError>> {
        Box::pin(async move {
            match &self.opener {
                Opener::Print => eprintln!("Open this URL to authorize: {url}"),
                Opener::Browser => {
                    eprintln!("Open this URL to authorize: {url}");
                    open_in_browser(url.as_str());
                }
                Opener::Custom(open) => open(url),
            }
            tokio::time::timeout(self.timeout, self.receive()).await.map_err(|_| OAuthError::AuthorizationTimedOut)?
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
            agent.authorize(Url::parse("https://as.example/authorize?x=1").unwrap()).await.map(|u| u.to_string())
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
            agent.authorize(Url::parse("https://as.example/authorize?x=1").unwrap()).await.map(|u| u.to_string())
        });
        // The opener is the browser: it is given the URL, then the redirect arrives.
        let opened = tokio::task::spawn_blocking(move || rx.recv().unwrap()).await.unwrap();
        assert_eq!(opened.as_str(), "https://as.example/authorize?x=1");
        browse(port, "GET /callback?code=c HTTP/1.1\r\nhost: x\r\n\r\n").await;
        assert_eq!(authorizing.await.unwrap().unwrap(), format!("http://127.0.0.1:{port}/callback?code=c"));
    }

    #[tokio::test]
    async fn the_loopback_agent_gives_up_after_its_timeout() {
        let agent = LoopbackRedirect::bind(0).await.unwrap().timeout(Duration::from_millis(50));
        let r = agent.authorize(Url::parse("https://as.example/authorize").unwrap()).await;
        assert!(matches!(r, Err(OAuthError::AuthorizationTimedOut)), "{r:?}");
    }
}
