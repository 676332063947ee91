//! [`OAuthClient`]: discovery, registration, the authorization code flow, refresh and
//! step-up, behind the transport's [`AuthProvider`] hook.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures_util::future::BoxFuture;
use http::{HeaderValue, StatusCode};
use mcp_jsonrpc::sync::MutexExt as _;
use serde::Deserialize;
use url::Url;

use super::agent::AuthorizationAgent;
use super::challenge::{BearerChallenge, split_scopes};
#[cfg(feature = "dpop")]
use super::dpop::NonceFrom;
use super::http::OAuthHttp;
use super::metadata::{
    AuthorizationServerMetadata, ProtectedResourceMetadata, discover_authorization_server, discover_resource,
    read_limited,
};
use super::pending::PendingAuthorization;
use super::pkce::{Pkce, constant_time_eq, random_token};
use super::{
    AssertionKey, ClientCredentials, Grant, OAuthConfig, OAuthError, StoredTokens, TokenEndpointAuthMethod, TokenKey,
};
use crate::client::auth::{AuthProvider, Unauthorized};
use crate::client::request::client_secret_basic;

/// The scope that asks for a refresh token (OpenID Connect; SEP-2207).
const OFFLINE_ACCESS: &str = "offline_access";

/// A token this close to its expiry is refreshed before it is used.
const REFRESH_MARGIN: Duration = Duration::from_secs(30);

/// The OAuth client of one MCP server: made by
/// [`HttpClientConfig::oauth`](crate::client::HttpClientConfig::oauth), or by hand for
/// [`HttpClientConfig::auth`](crate::client::HttpClientConfig::auth). Cloning shares it.
#[derive(Clone)]
pub struct OAuthClient {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient").field("server", &self.inner.server.as_str()).finish_non_exhaustive()
    }
}

struct Inner {
    config: OAuthConfig,
    /// The MCP endpoint.
    server: Url,
    http: OAuthHttp,
    /// The tokens in use, read by every request.
    current: Mutex<Option<(TokenKey, StoredTokens)>>,
    /// Held while a flow, a refresh or a discovery runs.
    flow: tokio::sync::Mutex<FlowState>,
    /// The DPoP key and nonces, when the configuration asks for DPoP-bound tokens.
    #[cfg(feature = "dpop")]
    dpop: Option<super::dpop::Dpop>,
}

/// What the flows learned.
#[derive(Default)]
struct FlowState {
    discovered: Option<Discovered>,
    /// The metadata of each authorization server met, by issuer: tokens are refreshed at the
    /// server that issued them (their key's issuer), never at the one discovered last.
    servers: HashMap<String, AuthorizationServerMetadata>,
    /// Clients registered, by issuer.
    clients: HashMap<String, ClientCredentials>,
    /// The scopes asked so far (a step-up asks for their union with the challenge's).
    requested: BTreeSet<String>,
    /// When the recent flows began.
    recent: VecDeque<Instant>,
    /// The error of the last failed flow.
    last_error: Option<String>,
}

/// The resource and its authorization server.
#[derive(Clone)]
struct Discovered {
    /// Where the resource metadata came from (a challenge naming another starts afresh).
    metadata_url: Option<String>,
    resource: Option<ProtectedResourceMetadata>,
    server: AuthorizationServerMetadata,
    /// The tokens' key: its issuer is the authorization server as the resource names it (or,
    /// for a 2025-03-26 server without resource metadata, the server's origin), the identity
    /// credentials and tokens are bound to.
    key: TokenKey,
}

impl OAuthClient {
    /// The OAuth client of the MCP endpoint `server`.
    pub fn new(server: Url, config: OAuthConfig) -> Self {
        let http = OAuthHttp::new(&config);
        OAuthClient {
            inner: Arc::new(Inner {
                server,
                http,
                current: Mutex::new(None),
                flow: tokio::sync::Mutex::new(FlowState::default()),
                #[cfg(feature = "dpop")]
                dpop: config
                    .dpop
                    .then(|| super::dpop::Dpop::new(config.dpop_key.clone().unwrap_or_else(super::DpopKey::generate))),
                config,
            }),
        }
    }

    /// The error of the last authorization attempt that failed (the transport only learns
    /// that it did).
    pub async fn last_error(&self) -> Option<String> {
        self.inner.flow.lock().await.last_error.clone()
    }

    /// The tokens in use.
    pub fn tokens(&self) -> Option<StoredTokens> {
        self.inner.current.lock_unpoisoned().as_ref().map(|(_, t)| t.clone())
    }

    /// Forgets the tokens (and removes them from the store).
    pub async fn logout(&self) {
        let current = self.inner.current.lock_unpoisoned().take();
        if let Some((key, _)) = current {
            self.inner.config.store.save(&key, None).await;
        }
    }

    /// Starts the authorization code flow without waiting for the user: discovers the
    /// resource and its authorization server, registers if needed, and returns the
    /// authorization URL with what finishing needs. Send the user to
    /// [`PendingAuthorization::url`], keep the pending authorization (server side: it holds
    /// the PKCE verifier and the client's credentials), and when the authorization server
    /// redirects back, call [`OAuthClient::finish_authorization`], in this process or in
    /// another with the same configuration. For web applications and tools whose user's
    /// round trip outlives one call.
    pub async fn begin_authorization(&self) -> Result<PendingAuthorization, OAuthError> {
        let mut flow = self.inner.flow.lock().await;
        let result = self.begin(&mut flow).await;
        if let Err(e) = &result {
            flow.last_error = Some(error_chain(e));
        }
        result
    }

    async fn begin(&self, flow: &mut FlowState) -> Result<PendingAuthorization, OAuthError> {
        let agent = self.agent()?.clone();
        let d = self.discover(flow, None, false).await?;
        if !d.server.supports_s256() {
            return Err(OAuthError::NoPkce(d.server.issuer.clone()));
        }
        let known = self.inner.config.store.load(&d.key).await.map(|t| t.client);
        let client = self.client(flow, &d, known).await?;
        let scopes = self.scopes(flow, &BearerChallenge::default(), &d, false);
        let redirect_uri = agent.redirect_uri().clone();
        let (url, state, pkce) = authorization_url(&d, &client, &redirect_uri, &scopes)?;
        Ok(PendingAuthorization {
            url,
            state,
            code_verifier: pkce.verifier,
            redirect_uri,
            key: d.key,
            server: d.server,
            client,
            scopes,
        })
    }

    /// Finishes an authorization begun with [`OAuthClient::begin_authorization`]: checks the
    /// redirect (its `state`, then its `iss`, then an `error`), exchanges the code at the
    /// token endpoint of the authorization server the flow began with, and keeps the tokens
    /// (in use, and in the store, where any client of the same configuration finds them).
    pub async fn finish_authorization(&self, pending: &PendingAuthorization, redirect: &Url) -> Result<(), OAuthError> {
        if check_resource(&pending.key.resource, &self.inner.server).is_err() {
            return Err(OAuthError::ForeignAuthorization(pending.key.resource.clone()));
        }
        let code = check_callback(redirect, &pending.state, &pending.server)?;
        let mut flow = self.inner.flow.lock().await;
        flow.servers.insert(pending.key.issuer.clone(), pending.server.clone());
        let d =
            Discovered { metadata_url: None, resource: None, server: pending.server.clone(), key: pending.key.clone() };
        let form = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code),
            ("redirect_uri", pending.redirect_uri.to_string()),
            ("code_verifier", pending.code_verifier.clone()),
            ("resource", pending.key.resource.clone()),
        ];
        let tokens = self.token_request(&d.server, pending.client.clone(), form, &pending.scopes, None).await?;
        self.keep(&d.key, tokens).await;
        Ok(())
    }

    /// The access token of the current tokens, refreshed first if it is about to expire, and
    /// whether it is DPoP-bound.
    async fn access_token(&self) -> Option<(String, bool)> {
        let (key, tokens) = self.inner.current.lock_unpoisoned().clone()?;
        if tokens.expires_within(REFRESH_MARGIN) && tokens.refresh_token.is_some() {
            let mut flow = self.inner.flow.lock().await;
            // Someone else may have refreshed meanwhile.
            if let Some(fresh) = self.current().filter(|t| t.0 != tokens.access_token) {
                return Some(fresh);
            }
            match self.refresh_and_keep(&mut flow, &key, &tokens).await {
                Ok(_) => return self.current(),
                Err(e) => {
                    tracing::debug!(error = %e, "refreshing the access token failed");
                    if is_invalid_client(&e) && self.is_dynamic(&tokens.client) {
                        self.forget_registration(&mut flow, &key).await;
                    }
                }
            }
        }
        Some((tokens.access_token, tokens.dpop_jkt.is_some()))
    }

    /// The access token in use, and whether it is DPoP-bound.
    fn current(&self) -> Option<(String, bool)> {
        self.inner.current.lock_unpoisoned().as_ref().map(|(_, t)| (t.access_token.clone(), t.dpop_jkt.is_some()))
    }

    /// Answers a challenge: `true` when a new token is there to try.
    async fn challenged(&self, challenge: Unauthorized) -> bool {
        #[cfg(feature = "dpop")]
        if let Some(dpop) = &self.inner.dpop
            && let Some(nonce) = challenge.dpop_nonce.as_ref().and_then(|v| v.to_str().ok())
        {
            // RFC 9449 §9: the resource wants its nonce in the proofs; the request is sent
            // again with it (the transport bounds how often).
            dpop.set_nonce(NonceFrom::Resource, &challenge.url, nonce);
            let asks = challenge.www_authenticate.as_ref().and_then(|v| v.to_str().ok());
            if asks.is_some_and(super::dpop::asks_for_nonce) {
                return true;
            }
        }
        let sent = self.current_token();
        let mut flow = self.inner.flow.lock().await;
        let now = self.current_token();
        if now.is_some() && now != sent {
            // Another request's flow got a new token while this one waited.
            return true;
        }
        match self.answer(&mut flow, challenge).await {
            Ok(retry) => retry,
            Err(e) => {
                tracing::warn!(error = %e, "authorization failed");
                flow.last_error = Some(error_chain(&e));
                false
            }
        }
    }

    async fn answer(&self, flow: &mut FlowState, challenge: Unauthorized) -> Result<bool, OAuthError> {
        let bearer = challenge
            .www_authenticate
            .as_ref()
            .and_then(|v| v.to_str().ok())
            .and_then(BearerChallenge::parse_any)
            .unwrap_or_default();
        let step_up = challenge.status == StatusCode::FORBIDDEN;
        if step_up && !bearer.is_insufficient_scope() {
            return Ok(false);
        }
        let current = self.inner.current.lock_unpoisoned().clone();
        // A token refused outright may be from an authorization server the resource no longer
        // trusts (SEP-2352): the metadata is read anew.
        let fresh = !step_up && current.is_some();
        let discovered = self.discover(flow, bearer.resource_metadata.as_deref(), fresh).await?;
        if current.as_ref().is_some_and(|(key, _)| *key != discovered.key) {
            // The resource now names another authorization server: the tokens of the one it
            // named before are not used with it, nor refreshed anywhere but where they came from.
            *self.inner.current.lock_unpoisoned() = None;
        }
        // What is known of this resource (read from the store once per challenge).
        let stored = self.stored(&discovered, current.clone()).await;
        let mut known_client = stored.as_ref().map(|t| t.client.clone());
        if step_up {
            let granted: BTreeSet<&String> = current.iter().flat_map(|(_, t)| &t.scopes).collect();
            if bearer.scopes().iter().all(|s| granted.contains(s)) {
                // Asking again for what the token has will not satisfy the server.
                return Ok(false);
            }
        } else if let Some(tokens) = &stored {
            if Some(&tokens.access_token) != self.current_token().as_ref() && !tokens.expires_within(REFRESH_MARGIN) {
                self.keep(&discovered.key, tokens.clone()).await;
                return Ok(true);
            }
            if tokens.refresh_token.is_some() {
                match self.refresh_and_keep(flow, &discovered.key, tokens).await {
                    Ok(_) => return Ok(true),
                    Err(e) => {
                        tracing::debug!(error = %e, "refreshing failed; authorizing anew");
                        if is_invalid_client(&e) && self.is_dynamic(&tokens.client) {
                            known_client = None;
                            self.forget_registration(flow, &discovered.key).await;
                        }
                    }
                }
            }
        }
        self.count_flow(flow)?;
        let scopes = self.scopes(flow, &bearer, &discovered, step_up);
        let tokens = match self.inner.config.grant {
            Grant::AuthorizationCode(_) => {
                // Before registering: a server without S256 gets nothing.
                if !discovered.server.supports_s256() {
                    return Err(OAuthError::NoPkce(discovered.server.issuer.clone()));
                }
                let client = self.client(flow, &discovered, known_client).await?;
                match self.authorize(&discovered, &scopes, &client).await {
                    Err(e) if is_invalid_client(&e) && self.is_dynamic(&client) => {
                        // The authorization server deleted the registration: register anew,
                        // once.
                        tracing::info!(issuer = %discovered.key.issuer, "the registered client is unknown to the authorization server; registering again");
                        self.forget_registration(flow, &discovered.key).await;
                        let client = self.client(flow, &discovered, None).await?;
                        self.authorize(&discovered, &scopes, &client).await?
                    }
                    other => other?,
                }
            }
            Grant::ClientCredentials => self.client_credentials(&discovered, &scopes).await?,
            #[cfg(feature = "wif")]
            Grant::JwtBearer(ref file) => self.jwt_bearer(&discovered, &scopes, file).await?,
            #[cfg(feature = "enterprise-managed")]
            Grant::IdJag(ref idp) => self.id_jag(&discovered, &scopes, idp).await?,
        };
        self.keep(&discovered.key, tokens).await;
        Ok(true)
    }

    /// Refreshes `tokens` of `key` at the authorization server that issued them, and puts the
    /// new ones in use; their access token. Other holders of the store (other processes
    /// sharing a token file) are held off meanwhile, and if one of them refreshed first its
    /// tokens are taken instead of presenting a rotated refresh token a second time.
    async fn refresh_and_keep(
        &self,
        flow: &mut FlowState,
        key: &TokenKey,
        tokens: &StoredTokens,
    ) -> Result<String, OAuthError> {
        let store = &self.inner.config.store;
        let _lock = store.lock(key).await;
        let mut tokens = tokens.clone();
        if let Some(latest) = store.load(key).await
            && (latest.access_token != tokens.access_token || latest.refresh_token != tokens.refresh_token)
        {
            if !latest.expires_within(REFRESH_MARGIN) {
                let access_token = latest.access_token.clone();
                *self.inner.current.lock_unpoisoned() = Some((key.clone(), latest));
                return Ok(access_token);
            }
            if latest.refresh_token.is_some() {
                tokens = latest;
            }
        }
        let server = self.server_of(flow, &key.issuer).await?;
        let refreshed = self.refresh(&server, key, &tokens).await?;
        let access_token = refreshed.access_token.clone();
        self.keep(key, refreshed).await;
        Ok(access_token)
    }

    /// The metadata of the authorization server `issuer` (met before, else discovered at the
    /// issuer itself).
    async fn server_of(&self, flow: &mut FlowState, issuer: &str) -> Result<AuthorizationServerMetadata, OAuthError> {
        if let Some(server) = flow.servers.get(issuer) {
            return Ok(server.clone());
        }
        let server = discover_authorization_server(&self.inner.http, issuer, true)
            .await?
            .ok_or_else(|| OAuthError::Status { url: issuer.to_owned(), status: 404 })?;
        flow.servers.insert(issuer.to_owned(), server.clone());
        Ok(server)
    }

    /// Forgets a dynamic registration the authorization server no longer knows, and the
    /// tokens issued to it.
    async fn forget_registration(&self, flow: &mut FlowState, key: &TokenKey) {
        flow.clients.remove(&key.issuer);
        {
            let mut current = self.inner.current.lock_unpoisoned();
            if current.as_ref().is_some_and(|(k, _)| k == key) {
                *current = None;
            }
        }
        self.inner.config.store.save(key, None).await;
    }

    /// Whether `client` was registered dynamically (neither pre-registered nor a Client ID
    /// Metadata Document), so that it may be registered again.
    fn is_dynamic(&self, client: &ClientCredentials) -> bool {
        let config = &self.inner.config;
        config.credentials.as_ref().is_none_or(|c| c.client_id != client.client_id)
            && config.client_metadata_url.as_deref() != Some(client.client_id.as_str())
    }

    /// The access token in use.
    fn current_token(&self) -> Option<String> {
        self.inner.current.lock_unpoisoned().as_ref().map(|(_, t)| t.access_token.clone())
    }

    /// The tokens for the discovered key: those in use, else the store's.
    async fn stored(&self, d: &Discovered, current: Option<(TokenKey, StoredTokens)>) -> Option<StoredTokens> {
        let tokens = match current {
            Some((key, tokens)) if key == d.key => Some(tokens),
            _ => self.inner.config.store.load(&d.key).await,
        };
        // A DPoP-bound token is of use only with the key it is bound to (a token file may hold
        // one of another process's key).
        tokens.filter(|t| t.dpop_jkt.is_none() || t.dpop_jkt.as_deref() == self.dpop_thumbprint())
    }

    /// The thumbprint of the client's DPoP key, if it has one.
    fn dpop_thumbprint(&self) -> Option<&str> {
        #[cfg(feature = "dpop")]
        if let Some(dpop) = &self.inner.dpop {
            return Some(dpop.key.thumbprint());
        }
        None
    }

    /// Puts `tokens` in use and in the store.
    async fn keep(&self, key: &TokenKey, tokens: StoredTokens) {
        *self.inner.current.lock_unpoisoned() = Some((key.clone(), tokens.clone()));
        self.inner.config.store.save(key, Some(tokens)).await;
    }

    /// Refuses a flow beyond the configured number within a minute.
    fn count_flow(&self, flow: &mut FlowState) -> Result<(), OAuthError> {
        let now = Instant::now();
        while flow.recent.front().is_some_and(|t| now.duration_since(*t) > Duration::from_secs(60)) {
            flow.recent.pop_front();
        }
        if flow.recent.len() >= self.inner.config.max_flows_per_minute {
            return Err(OAuthError::TooManyAttempts);
        }
        flow.recent.push_back(now);
        Ok(())
    }

    /// The scopes to ask for: the challenge's, else the resource's `scopes_supported`, else
    /// none; a step-up adds those asked before; `offline_access` when the authorization server
    /// lists it.
    fn scopes(&self, flow: &mut FlowState, bearer: &BearerChallenge, d: &Discovered, step_up: bool) -> Vec<String> {
        let mut scopes: BTreeSet<String> = if bearer.scope.is_some() {
            bearer.scopes().into_iter().collect()
        } else if let Some(resource) = &d.resource {
            resource.scopes_supported.iter().cloned().collect()
        } else {
            BTreeSet::new()
        };
        if step_up {
            scopes.extend(flow.requested.iter().cloned());
        }
        // A refresh token, where the authorization server offers them by scope (SEP-2207): not
        // for a client with its own credentials, which can always ask again.
        let offers_refresh = d.server.scopes_supported.as_ref().is_some_and(|s| s.iter().any(|s| s == OFFLINE_ACCESS));
        if offers_refresh && matches!(self.inner.config.grant, Grant::AuthorizationCode(_)) {
            scopes.insert(OFFLINE_ACCESS.to_owned());
        }
        flow.requested = scopes.clone();
        scopes.into_iter().collect()
    }

    /// Finds (once; anew when `fresh` or when a challenge names other metadata) the resource
    /// and its authorization server.
    async fn discover(
        &self,
        flow: &mut FlowState,
        metadata_url: Option<&str>,
        fresh: bool,
    ) -> Result<Discovered, OAuthError> {
        if let Some(d) = &flow.discovered
            && !fresh
            && (metadata_url.is_none() || d.metadata_url.as_deref() == metadata_url)
        {
            return Ok(d.clone());
        }
        let http = &self.inner.http;
        let server = &self.inner.server;
        let resource = discover_resource(http, server, metadata_url).await?;
        if let Some(r) = &resource {
            check_resource(&r.resource, server)?;
        }
        let issuer = match resource.as_ref().and_then(|r| r.authorization_servers.first()) {
            Some(issuer) => issuer.clone(),
            // 2025-03-26: the MCP server's origin is the authorization server.
            None => origin(server).as_str().trim_end_matches('/').to_owned(),
        };
        let metadata = match discover_authorization_server(http, &issuer, resource.is_some()).await? {
            Some(m) => m,
            None if resource.is_none() => AuthorizationServerMetadata::default_endpoints(&origin(server)),
            None => return Err(OAuthError::Status { url: issuer, status: 404 }),
        };
        let resource_id = match &resource {
            Some(r) => r.resource.clone(),
            None => canonical(server),
        };
        let key = TokenKey { issuer, resource: resource_id };
        flow.servers.insert(key.issuer.clone(), metadata.clone());
        let d = Discovered { metadata_url: metadata_url.map(str::to_owned), resource, server: metadata, key };
        flow.discovered = Some(d.clone());
        Ok(d)
    }

    /// The client to use with the authorization server: registered before (in this process,
    /// or `known` from the stored tokens), pre-registered (for this server only), a Client ID
    /// Metadata Document, or registered now.
    async fn client(
        &self,
        flow: &mut FlowState,
        d: &Discovered,
        known: Option<ClientCredentials>,
    ) -> Result<ClientCredentials, OAuthError> {
        if let Some(c) = flow.clients.get(&d.key.issuer) {
            return Ok(c.clone());
        }
        let config = &self.inner.config;
        let client = if let Some(c) = known {
            c
        } else if let Some(c) = &config.credentials {
            check_binding(c, &d.key.issuer)?;
            c.clone()
        } else if let (Some(true), Some(url)) =
            (d.server.client_id_metadata_document_supported, &config.client_metadata_url)
        {
            ClientCredentials::new(url.clone(), None).auth_method(TokenEndpointAuthMethod::None)
        } else if let Some(endpoint) = &d.server.registration_endpoint {
            self.register(endpoint, &d.server).await?
        } else {
            return Err(OAuthError::NoRegistration(d.server.issuer.clone()));
        };
        flow.clients.insert(d.key.issuer.clone(), client.clone());
        Ok(client)
    }

    /// Dynamic Client Registration (RFC 7591).
    async fn register(
        &self,
        endpoint: &str,
        server: &AuthorizationServerMetadata,
    ) -> Result<ClientCredentials, OAuthError> {
        let url = Url::parse(endpoint).map_err(|_| OAuthError::InvalidUrl(endpoint.to_owned()))?;
        let supported = server.token_endpoint_auth_methods_supported.clone().unwrap_or_default();
        let method = ["none", "client_secret_basic", "client_secret_post"]
            .into_iter()
            .find(|m| supported.iter().any(|s| s == m))
            .unwrap_or("none");
        let agent = self.agent()?;
        let redirect_uri = agent.redirect_uri();
        let body = serde_json::json!({
            "client_name": self.inner.config.client_name,
            "application_type": application_type(redirect_uri),
            "redirect_uris": [redirect_uri.as_str()],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
        });
        let http = &self.inner.http;
        let request = http.post(&url)?.json(&body);
        let response = http.send(request, &url).await?;
        let registered: Registered = read_answer(response, &url).await?;
        let auth_method = registered
            .token_endpoint_auth_method
            .as_deref()
            .and_then(TokenEndpointAuthMethod::from_name)
            .or_else(|| TokenEndpointAuthMethod::from_name(method));
        let mut client = ClientCredentials::new(registered.client_id, registered.client_secret);
        client.auth_method = auth_method;
        Ok(client)
    }

    /// The authorization code flow: PKCE, the user's authorization through the agent, the
    /// code exchanged for tokens.
    async fn authorize(
        &self,
        d: &Discovered,
        scopes: &[String],
        client: &ClientCredentials,
    ) -> Result<StoredTokens, OAuthError> {
        if !d.server.supports_s256() {
            return Err(OAuthError::NoPkce(d.server.issuer.clone()));
        }
        let agent = self.agent()?;
        let redirect_uri = agent.redirect_uri().clone();
        let (url, state, pkce) = authorization_url(d, client, &redirect_uri, scopes)?;
        let callback = agent.authorize(url).await?;
        let code = check_callback(&callback, &state, &d.server)?;
        let form = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code),
            ("redirect_uri", redirect_uri.to_string()),
            ("code_verifier", pkce.verifier),
            ("resource", d.key.resource.clone()),
        ];
        self.token_request(&d.server, client.clone(), form, scopes, None).await
    }

    /// The agent of the authorization code flow.
    fn agent(&self) -> Result<&Arc<dyn AuthorizationAgent>, OAuthError> {
        match &self.inner.config.grant {
            Grant::AuthorizationCode(agent) => Ok(agent),
            _ => Err(OAuthError::Configuration("no agent for the authorization code flow")),
        }
    }

    /// The client credentials grant: the client's own credentials for tokens, from the
    /// authorization server they are bound to only.
    async fn client_credentials(&self, d: &Discovered, scopes: &[String]) -> Result<StoredTokens, OAuthError> {
        let client = self
            .inner
            .config
            .credentials
            .clone()
            .ok_or(OAuthError::Configuration("the client credentials grant needs credentials"))?;
        check_binding(&client, &d.key.issuer)?;
        let mut form = vec![("grant_type", "client_credentials".to_owned()), ("resource", d.key.resource.clone())];
        if !scopes.is_empty() {
            form.push(("scope", scopes.join(" ")));
        }
        self.token_request(&d.server, client, form, scopes, None).await
    }

    /// The JWT bearer grant (RFC 7523 §2.1) with the workload's JWT, read from `file` now (the
    /// platform rotates it), at the authorization server the client is bound to only.
    #[cfg(feature = "wif")]
    async fn jwt_bearer(
        &self,
        d: &Discovered,
        scopes: &[String],
        file: &std::path::Path,
    ) -> Result<StoredTokens, OAuthError> {
        let client = self
            .inner
            .config
            .credentials
            .clone()
            .ok_or(OAuthError::Configuration("the JWT bearer grant needs a client id"))?;
        check_binding(&client, &d.key.issuer)?;
        let assertion = read_token_file(file).await?;
        let mut form = vec![
            ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer".to_owned()),
            ("assertion", assertion),
            ("resource", d.key.resource.clone()),
        ];
        if !scopes.is_empty() {
            form.push(("scope", scopes.join(" ")));
        }
        self.token_request(&d.server, client, form, scopes, None).await
    }

    /// Enterprise-managed authorization (SEP-990): the ID token exchanged at the IdP for an
    /// ID-JAG for the authorization server and the resource, then the ID-JAG for tokens with
    /// the JWT bearer grant, the client authenticated as its credentials say.
    #[cfg(feature = "enterprise-managed")]
    async fn id_jag(
        &self,
        d: &Discovered,
        scopes: &[String],
        idp: &super::EnterpriseIdp,
    ) -> Result<StoredTokens, OAuthError> {
        let client = self
            .inner
            .config
            .credentials
            .clone()
            .ok_or(OAuthError::Configuration("enterprise-managed authorization needs client credentials"))?;
        check_binding(&client, &d.key.issuer)?;
        let url = Url::parse(&idp.token_endpoint).map_err(|_| OAuthError::InvalidUrl(idp.token_endpoint.clone()))?;
        let http = &self.inner.http;
        let mut form = vec![
            ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange".to_owned()),
            ("requested_token_type", ID_JAG.to_owned()),
            ("subject_token", idp.id_token.clone()),
            ("subject_token_type", "urn:ietf:params:oauth:token-type:id_token".to_owned()),
            ("audience", d.server.issuer.clone()),
            ("resource", d.key.resource.clone()),
        ];
        if !scopes.is_empty() {
            form.push(("scope", scopes.join(" ")));
        }
        let mut request = http.post(&url)?;
        match &idp.client_secret {
            Some(secret) => request = client_secret_basic(request, &idp.client_id, secret),
            None => form.push(("client_id", idp.client_id.clone())),
        }
        let response = http.send(request.form(&form), &url).await?;
        let exchanged: Exchanged = read_answer(response, &url).await?;
        if exchanged.issued_token_type != ID_JAG {
            return Err(OAuthError::InvalidResponse("the identity provider did not issue an ID-JAG"));
        }
        let mut form = vec![
            ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer".to_owned()),
            ("assertion", exchanged.access_token),
            ("resource", d.key.resource.clone()),
        ];
        if !scopes.is_empty() {
            form.push(("scope", scopes.join(" ")));
        }
        self.token_request(&d.server, client, form, scopes, None).await
    }

    /// A refresh token exchanged for new tokens at `server`, the issuer of `key`.
    async fn refresh(
        &self,
        server: &AuthorizationServerMetadata,
        key: &TokenKey,
        tokens: &StoredTokens,
    ) -> Result<StoredTokens, OAuthError> {
        let refresh_token = tokens.refresh_token.clone().unwrap_or_default();
        let form = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh_token.clone()),
            ("resource", key.resource.clone()),
        ];
        self.token_request(server, tokens.client.clone(), form, &tokens.scopes, Some(refresh_token)).await
    }

    /// A request to the token endpoint of `server`, with the client's authentication.
    async fn token_request(
        &self,
        server: &AuthorizationServerMetadata,
        client: ClientCredentials,
        form: Vec<(&'static str, String)>,
        scopes: &[String],
        old_refresh: Option<String>,
    ) -> Result<StoredTokens, OAuthError> {
        let url =
            Url::parse(&server.token_endpoint).map_err(|_| OAuthError::InvalidUrl(server.token_endpoint.clone()))?;
        let http = &self.inner.http;
        let bound_to = self.dpop_for(server);
        // Once more at most: with the nonce of a `use_dpop_nonce` answer (RFC 9449 §8).
        let mut tries = 0;
        let answer: TokenAnswer = loop {
            let mut form = form.clone();
            let mut request = http.post(&url)?;
            if let Some(key) = &self.inner.config.assertion {
                form.push(("client_id", client.client_id.clone()));
                form.push((
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
                ));
                form.push(("client_assertion", assertion(key, &client.client_id, &server.issuer)?));
            } else {
                request = authenticate(request, &mut form, &client, server);
            }
            #[cfg(feature = "dpop")]
            if let (Some(dpop), Some(_)) = (&self.inner.dpop, bound_to) {
                request = request.header("DPoP", dpop.proof(NonceFrom::AuthorizationServer, "POST", &url, None));
            }
            let response = http.send(request.form(&form), &url).await?;
            let nonce = response.headers().get("dpop-nonce").and_then(|v| v.to_str().ok()).map(str::to_owned);
            #[cfg(feature = "dpop")]
            if let (Some(dpop), Some(_), Some(nonce)) = (&self.inner.dpop, bound_to, &nonce) {
                dpop.set_nonce(NonceFrom::AuthorizationServer, &url, nonce);
            }
            match read_answer(response, &url).await {
                Err(OAuthError::Refused { error, .. })
                    if error == "use_dpop_nonce" && bound_to.is_some() && nonce.is_some() && tries == 0 =>
                {
                    tries += 1;
                }
                other => break other?,
            }
        };
        let dpop_jkt = if answer.token_type.eq_ignore_ascii_case("bearer") {
            None
        } else if answer.token_type.eq_ignore_ascii_case("dpop") && bound_to.is_some() {
            bound_to.map(str::to_owned)
        } else {
            return Err(OAuthError::UnsupportedTokenType(answer.token_type));
        };
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        Ok(StoredTokens {
            client,
            access_token: answer.access_token,
            refresh_token: answer.refresh_token.or(old_refresh),
            expires_at: answer.expires_in.map(|s| now.saturating_add(s)),
            scopes: answer.scope.as_deref().map(split_scopes).unwrap_or_else(|| scopes.to_vec()),
            dpop_jkt,
        })
    }

    /// The thumbprint of the DPoP key the token requests to `server` prove possession of:
    /// the client's, when it asks for DPoP and the server takes `ES256` proofs.
    fn dpop_for(&self, server: &AuthorizationServerMetadata) -> Option<&str> {
        let algs = server.dpop_signing_alg_values_supported.as_deref().unwrap_or_default();
        self.dpop_thumbprint().filter(|_| algs.iter().any(|a| a == "ES256"))
    }
}

/// The largest workload token file read.
#[cfg(feature = "wif")]
const MAX_TOKEN_FILE: u64 = 64 * 1024;

/// The JWT of a workload token file, trimmed; refused if larger than [`MAX_TOKEN_FILE`] or
/// empty.
#[cfg(feature = "wif")]
async fn read_token_file(file: &std::path::Path) -> Result<String, OAuthError> {
    use tokio::io::AsyncReadExt as _;
    let opened = tokio::fs::File::open(file).await.map_err(OAuthError::Io)?;
    let mut text = String::new();
    opened.take(MAX_TOKEN_FILE + 1).read_to_string(&mut text).await.map_err(OAuthError::Io)?;
    let token = text.trim();
    if text.len() as u64 > MAX_TOKEN_FILE || token.is_empty() {
        return Err(OAuthError::Configuration("the workload token file is empty or too large"));
    }
    Ok(token.to_owned())
}

/// The authorization request's URL, its `state` and the PKCE pair.
fn authorization_url(
    d: &Discovered,
    client: &ClientCredentials,
    redirect_uri: &Url,
    scopes: &[String],
) -> Result<(Url, String, Pkce), OAuthError> {
    let pkce = Pkce::new();
    let state = random_token();
    let mut url = Url::parse(&d.server.authorization_endpoint)
        .map_err(|_| OAuthError::InvalidUrl(d.server.authorization_endpoint.clone()))?;
    super::http::require_https(&url)?;
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", &client.client_id)
            .append_pair("redirect_uri", redirect_uri.as_str())
            .append_pair("code_challenge", &pkce.challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", &state)
            .append_pair("resource", &d.key.resource);
        if !scopes.is_empty() {
            q.append_pair("scope", &scopes.join(" "));
        }
        // OpenID Connect grants `offline_access` only with the consent prompt (Core §11);
        // OpenID providers drop it otherwise, and with it the refresh token.
        if scopes.iter().any(|s| s == OFFLINE_ACCESS) {
            q.append_pair("prompt", "consent");
        }
    }
    Ok((url, state, pkce))
}

/// Pre-registered credentials are for the authorization server they name, and no other.
fn check_binding(credentials: &ClientCredentials, issuer: &str) -> Result<(), OAuthError> {
    match &credentials.issuer {
        None => Err(OAuthError::UnboundCredentials { client_id: credentials.client_id.clone() }),
        Some(bound) if bound != issuer => {
            Err(OAuthError::CredentialsIssuerMismatch { bound: bound.clone(), named: issuer.to_owned() })
        }
        Some(_) => Ok(()),
    }
}

/// Whether the authorization server said it does not know the client (a deleted
/// registration).
fn is_invalid_client(e: &OAuthError) -> bool {
    matches!(e, OAuthError::Refused { error, .. } if error == "invalid_client")
}

/// Adds the client's authentication at the token endpoint to a request.
fn authenticate(
    mut request: reqwest::RequestBuilder,
    form: &mut Vec<(&'static str, String)>,
    client: &ClientCredentials,
    server: &AuthorizationServerMetadata,
) -> reqwest::RequestBuilder {
    match auth_method(client, server) {
        TokenEndpointAuthMethod::ClientSecretBasic => {
            let secret = client.client_secret.as_deref().unwrap_or_default();
            request = client_secret_basic(request, &client.client_id, secret);
        }
        TokenEndpointAuthMethod::ClientSecretPost => {
            form.push(("client_id", client.client_id.clone()));
            form.push(("client_secret", client.client_secret.clone().unwrap_or_default()));
        }
        _ => form.push(("client_id", client.client_id.clone())),
    }
    request
}

/// A JWT assertion of the client (RFC 7523 §3): issued by and about the client, for the
/// authorization server, valid five minutes, with a random id.
fn assertion(key: &AssertionKey, client_id: &str, issuer: &str) -> Result<String, OAuthError> {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    let claims = serde_json::json!({
        "iss": client_id,
        "sub": client_id,
        "aud": issuer,
        "iat": now,
        "exp": now + 300,
        "jti": random_token(),
    });
    let header = jsonwebtoken::Header::new(key.algorithm);
    jsonwebtoken::encode(&header, &claims, &key.key).map_err(OAuthError::Assertion)
}

impl AuthProvider for OAuthClient {
    fn authorization(&self) -> BoxFuture<'_, Option<HeaderValue>> {
        Box::pin(async move {
            let (token, bound) = self.access_token().await?;
            let scheme = if bound { "DPoP" } else { "Bearer" };
            HeaderValue::from_str(&format!("{scheme} {token}")).ok()
        })
    }

    fn request_headers<'a>(&'a self, method: &'a http::Method, url: &'a Url) -> BoxFuture<'a, http::HeaderMap> {
        Box::pin(async move {
            let mut headers = http::HeaderMap::new();
            let Some((token, bound)) = self.access_token().await else { return headers };
            let scheme = if bound { "DPoP" } else { "Bearer" };
            if let Ok(value) = HeaderValue::from_str(&format!("{scheme} {token}")) {
                headers.insert(http::header::AUTHORIZATION, value);
            }
            #[cfg(feature = "dpop")]
            if let (true, Some(dpop)) = (bound, &self.inner.dpop)
                && let Ok(proof) =
                    HeaderValue::from_str(&dpop.proof(NonceFrom::Resource, method.as_str(), url, Some(&token)))
            {
                headers.insert("dpop", proof);
            }
            #[cfg(not(feature = "dpop"))]
            let _ = (method, url);
            headers
        })
    }

    fn on_response(&self, url: &Url, headers: &http::HeaderMap) {
        // RFC 9449 §8, §9: a server may hand a new nonce with any answer; the next proofs to
        // it carry that one.
        #[cfg(feature = "dpop")]
        if let Some(dpop) = &self.inner.dpop
            && let Some(nonce) = headers.get("dpop-nonce").and_then(|v| v.to_str().ok())
        {
            dpop.set_nonce(NonceFrom::Resource, url, nonce);
        }
        #[cfg(not(feature = "dpop"))]
        let _ = (url, headers);
    }

    fn on_unauthorized(&self, challenge: Unauthorized) -> BoxFuture<'_, bool> {
        Box::pin(self.challenged(challenge))
    }
}

/// A registration response (RFC 7591 §3.2.1).
#[derive(Deserialize)]
struct Registered {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

/// A token response (RFC 6749 §5.1).
#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    /// RFC 6749 §5.1: required; this client uses `Bearer` tokens only.
    token_type: String,
    #[serde(default)]
    expires_in: Option<u64>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
}

/// The token type of an identity assertion authorization grant (SEP-990).
#[cfg(feature = "enterprise-managed")]
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// A token exchange response (RFC 8693 §2.2.1).
#[cfg(feature = "enterprise-managed")]
#[derive(Deserialize)]
struct Exchanged {
    access_token: String,
    issued_token_type: String,
}

/// An OAuth error response (RFC 6749 §5.2).
#[derive(Deserialize)]
struct ErrorAnswer {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

/// The JSON of a success, or the OAuth error of a failure.
async fn read_answer<T: serde::de::DeserializeOwned>(response: reqwest::Response, url: &Url) -> Result<T, OAuthError> {
    let status = response.status();
    let body = read_limited(response, url).await?;
    if !status.is_success() {
        if let Ok(e) = serde_json::from_slice::<ErrorAnswer>(&body) {
            return Err(OAuthError::Refused { error: e.error, description: e.error_description });
        }
        return Err(OAuthError::Status { url: url.to_string(), status: status.as_u16() });
    }
    serde_json::from_slice(&body).map_err(|e| OAuthError::Metadata { url: url.to_string(), source: e })
}

/// How the client authenticates at the token endpoint: as registered, else as the server
/// supports (Basic by default, RFC 8414), or not at all without a secret.
fn auth_method(client: &ClientCredentials, server: &AuthorizationServerMetadata) -> TokenEndpointAuthMethod {
    if let Some(m) = client.auth_method {
        return m;
    }
    if client.client_secret.is_none() {
        return TokenEndpointAuthMethod::None;
    }
    let supported = server.token_endpoint_auth_methods_supported.as_deref().unwrap_or_default();
    if supported.iter().any(|m| m == "client_secret_post") && !supported.iter().any(|m| m == "client_secret_basic") {
        TokenEndpointAuthMethod::ClientSecretPost
    } else {
        TokenEndpointAuthMethod::ClientSecretBasic
    }
}

/// The code of the redirect, once its `state` (first: nothing of a redirect that is not this
/// flow's is acted on or shown), then its `iss`, then its `error` are checked.
pub(crate) fn check_callback(
    callback: &Url,
    state: &str,
    server: &AuthorizationServerMetadata,
) -> Result<String, OAuthError> {
    let params: HashMap<String, String> = callback.query_pairs().into_owned().collect();
    if !params.get("state").is_some_and(|s| constant_time_eq(s.as_bytes(), state.as_bytes())) {
        return Err(OAuthError::InvalidResponse("its state is not the one sent"));
    }
    // RFC 9207: where the server says it sends `iss`, it must be there and be the issuer.
    match (params.get("iss"), server.authorization_response_iss_parameter_supported) {
        (Some(iss), _) if iss != &server.issuer => {
            return Err(OAuthError::InvalidResponse("its iss is another issuer"));
        }
        (None, Some(true)) => return Err(OAuthError::InvalidResponse("it has no iss")),
        _ => {}
    }
    if let Some(error) = params.get("error") {
        return Err(OAuthError::Refused {
            error: error.clone(),
            description: params.get("error_description").cloned(),
        });
    }
    params.get("code").cloned().ok_or(OAuthError::InvalidResponse("it has no code"))
}

/// SEP-837: `native` for a client whose redirect goes to the loopback interface or a custom
/// scheme (a desktop app, a command-line tool), `web` for one served from a web origin.
fn application_type(redirect_uri: &Url) -> &'static str {
    let loopback = matches!(redirect_uri.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
    if loopback || !matches!(redirect_uri.scheme(), "http" | "https") { "native" } else { "web" }
}

/// The origin of a URL, as a URL with the path `/`.
fn origin(url: &Url) -> Url {
    let mut origin = url.clone();
    origin.set_path("/");
    origin.set_query(None);
    origin.set_fragment(None);
    origin
}

/// The canonical URI of the MCP server (RFC 8707): without query and fragment.
fn canonical(url: &Url) -> String {
    let mut c = url.clone();
    c.set_query(None);
    c.set_fragment(None);
    c.to_string()
}

/// The resource metadata must be for this server: the same origin, and a path the server's
/// path is under.
fn check_resource(resource: &str, server: &Url) -> Result<(), OAuthError> {
    let mismatch = || OAuthError::ResourceMismatch { resource: resource.to_owned(), server: server.to_string() };
    let r = Url::parse(resource).map_err(|_| mismatch())?;
    if r.origin() != server.origin() {
        return Err(mismatch());
    }
    let prefix = r.path().trim_end_matches('/');
    let path = server.path();
    if path == prefix || path.starts_with(&format!("{prefix}/")) || prefix.is_empty() {
        Ok(())
    } else {
        Err(mismatch())
    }
}

/// An error with its causes, for the log and [`OAuthClient::last_error`].
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        source = cause.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "wif")]
    #[tokio::test]
    async fn a_workload_token_file_is_read_trimmed_and_bounded() {
        let dir = std::env::temp_dir().join(format!("mcp-wif-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("token");
        std::fs::write(&file, "header.claims.signature\n").unwrap();
        assert_eq!(read_token_file(&file).await.unwrap(), "header.claims.signature");
        // Rotated by the platform: read anew.
        std::fs::write(&file, "next.claims.signature").unwrap();
        assert_eq!(read_token_file(&file).await.unwrap(), "next.claims.signature");
        std::fs::write(&file, " \n").unwrap();
        assert!(matches!(read_token_file(&file).await, Err(OAuthError::Configuration(_))));
        std::fs::write(&file, "a".repeat(MAX_TOKEN_FILE as usize + 1)).unwrap();
        assert!(matches!(read_token_file(&file).await, Err(OAuthError::Configuration(_))));
        assert!(matches!(read_token_file(&dir.join("missing")).await, Err(OAuthError::Io(_))));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn at_most_the_configured_flows_run_in_a_minute() {
        let config = OAuthConfig::client_credentials("id", "secret").max_flows_per_minute(2);
        let client = OAuthClient::new(Url::parse("https://x.example/mcp").unwrap(), config);
        let mut flow = FlowState::default();
        assert!(client.count_flow(&mut flow).is_ok());
        assert!(client.count_flow(&mut flow).is_ok());
        assert!(matches!(client.count_flow(&mut flow), Err(OAuthError::TooManyAttempts)));
    }

    #[test]
    fn the_resource_must_be_this_server() {
        let server = Url::parse("https://x.example/api/mcp").unwrap();
        assert!(check_resource("https://x.example/api/mcp", &server).is_ok());
        assert!(check_resource("https://x.example/api", &server).is_ok());
        assert!(check_resource("https://x.example", &server).is_ok());
        assert!(check_resource("https://x.example/other", &server).is_err());
        assert!(check_resource("https://x.example/ap", &server).is_err());
        assert!(check_resource("https://evil.example/api/mcp", &server).is_err());
        assert!(check_resource("not a url", &server).is_err());
    }

    #[test]
    fn callbacks_are_checked() {
        let server = AuthorizationServerMetadata {
            issuer: "https://as.example".into(),
            authorization_response_iss_parameter_supported: Some(true),
            ..Default::default()
        };
        let cb = |q: &str| Url::parse(&format!("http://127.0.0.1/callback?{q}")).unwrap();
        assert_eq!(check_callback(&cb("code=c&state=s&iss=https%3A%2F%2Fas.example"), "s", &server).unwrap(), "c");
        assert!(check_callback(&cb("code=c&state=x&iss=https%3A%2F%2Fas.example"), "s", &server).is_err());
        assert!(check_callback(&cb("code=c&state=s"), "s", &server).is_err(), "iss advertised but missing");
        assert!(check_callback(&cb("code=c&state=s&iss=https%3A%2F%2Fevil"), "s", &server).is_err());
        assert!(matches!(
            check_callback(&cb("error=access_denied&state=s&iss=https%3A%2F%2Fas.example"), "s", &server),
            Err(OAuthError::Refused { .. })
        ));
        // An error is acted on only once the state and iss are this flow's: a forged redirect
        // (a local page's) is not this flow's answer, whatever it says.
        for forged in
            ["error=access_denied", "error=access_denied&state=x", "error=access_denied&state=s&iss=https%3A%2F%2Fevil"]
        {
            assert!(
                matches!(check_callback(&cb(forged), "s", &server), Err(OAuthError::InvalidResponse(_))),
                "{forged}"
            );
        }
        assert!(check_callback(&cb("code=c&state=ss&iss=https%3A%2F%2Fas.example"), "s", &server).is_err());
        assert!(check_callback(&cb("code=c&state=&iss=https%3A%2F%2Fas.example"), "s", &server).is_err());
        let quiet = AuthorizationServerMetadata { issuer: "https://as.example".into(), ..Default::default() };
        assert_eq!(check_callback(&cb("code=c&state=s"), "s", &quiet).unwrap(), "c");
    }

    #[test]
    fn the_token_endpoint_authentication_follows_the_registration_and_the_server() {
        let server = |m: &[&str]| AuthorizationServerMetadata {
            token_endpoint_auth_methods_supported: Some(m.iter().map(|s| (*s).to_owned()).collect()),
            ..Default::default()
        };
        let secret = ClientCredentials::new("c", Some("s".into()));
        assert_eq!(auth_method(&secret, &server(&["client_secret_post"])), TokenEndpointAuthMethod::ClientSecretPost);
        assert_eq!(auth_method(&secret, &server(&[])), TokenEndpointAuthMethod::ClientSecretBasic);
        assert_eq!(auth_method(&ClientCredentials::new("c", None), &server(&[])), TokenEndpointAuthMethod::None);
        let registered = secret.clone().auth_method(TokenEndpointAuthMethod::ClientSecretPost);
        assert_eq!(
            auth_method(&registered, &server(&["client_secret_basic"])),
            TokenEndpointAuthMethod::ClientSecretPost
        );
    }
}
