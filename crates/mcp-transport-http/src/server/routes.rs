//! The endpoint's routes: the MCP endpoint (GET, POST, DELETE), the HTTP+SSE endpoints if
//! enabled, the protected resource metadata (feature `auth`), the health routes and `/metrics`
//! (feature `metrics`), over the state of one endpoint. The top of the server: it uses the handlers and the endpoint's state
//! below it, and nothing uses it but the public functions of `server`.

use std::sync::Arc;

use axum::extract::State;
#[cfg(feature = "auth")]
use axum::http::HeaderMap;
use axum::http::StatusCode;
use axum::routing::{get, post};

use super::config::HttpServerConfig;
use super::endpoint::App;
use super::factory::SessionFactory;
use super::handlers::{get_delete, http_sse, post};
use super::session::drain::Drain;

/// The endpoint's routes: the MCP endpoint, and the HTTP+SSE endpoints if enabled.
pub(crate) fn router(factory: Arc<dyn SessionFactory>, config: HttpServerConfig) -> axum::Router {
    let path = config.path.clone();
    let http_sse = config.http_sse.clone();
    #[cfg(feature = "auth")]
    let auth = config.auth.clone();
    let drain = config.drain.clone();
    let health = config.health_routes;
    #[cfg(feature = "metrics")]
    let metrics = config.metrics.clone();
    let app = App::new(factory, config);
    let mcp = get(get_delete::get_mcp).post(post::post_mcp).delete(get_delete::delete_mcp);
    let mut router = axum::Router::new().route(&path, mcp);
    if let Some((sse, messages)) = http_sse {
        router = router.route(&sse, get(http_sse::open_stream)).route(&messages, post(http_sse::post_message));
    }
    // RFC 9449 §9: every answer of the endpoint carries its current DPoP nonce, when it
    // requires nonces (nothing is added to the requests of other endpoints).
    #[cfg(feature = "auth-dpop")]
    if let Some(auth) = auth.clone().filter(|a| super::auth::check::requires_dpop_nonce(a)) {
        let add = move |response: axum::response::Response| {
            let auth = auth.clone();
            async move { super::auth::check::with_dpop_nonce(&auth, response) }
        };
        router = router.route_layer(axum::middleware::map_response(add));
    }
    // The protected resource metadata, served without a token, to any origin.
    #[cfg(feature = "auth")]
    if let Some(auth) = auth {
        use super::auth::AuthConfig;
        // Encoded once: the metadata does not change while the router serves.
        let body = auth.metadata_json();
        for metadata_path in auth.metadata_paths(&path) {
            let body = body.clone();
            let answer = move || async move { AuthConfig::metadata_response(body) };
            let preflight = |headers: HeaderMap| async move { AuthConfig::metadata_preflight(&headers) };
            router = router.route(&metadata_path, get(answer).options(preflight));
        }
    }
    if health {
        router = health_routes(router, drain);
    }
    #[cfg(feature = "metrics")]
    if let Some(handle) = metrics {
        router = router.route("/metrics", get(move || async move { super::metrics::render(&handle) }));
    }
    router.with_state(app)
}

/// `/healthz` (200 while the process serves) and `/readyz` (200; 503 once draining, while a
/// fleet's store of shared sessions is not ready, or once the instance lost its tag).
fn health_routes(router: axum::Router<Arc<App>>, drain: Arc<Drain>) -> axum::Router<Arc<App>> {
    let ready = move |State(app): State<Arc<App>>| {
        let answer = if !drain.is_ready() {
            (StatusCode::SERVICE_UNAVAILABLE, "draining")
        } else if app.fleet.as_ref().is_some_and(|fleet| fleet.store.readiness().is_err()) {
            (StatusCode::SERVICE_UNAVAILABLE, "shared session store unavailable")
        } else if app.fleet.as_ref().is_some_and(|fleet| fleet.is_lost()) {
            (StatusCode::SERVICE_UNAVAILABLE, "instance tag lost")
        } else {
            (StatusCode::OK, "ready")
        };
        async move { answer }
    };
    router.route("/healthz", get(|| async { "ok" })).route("/readyz", get(ready))
}
