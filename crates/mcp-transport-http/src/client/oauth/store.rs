//! Where tokens and registered clients are kept between flows (and, with a file store,
//! between runs).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::future::BoxFuture;
use mcp_jsonrpc::sync::MutexExt as _;
use serde::{Deserialize, Serialize};

/// What a token is for: the authorization server that issued it and the resource.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TokenKey {
    /// The authorization server's issuer.
    pub issuer: String,
    /// The resource (the MCP server's identifier).
    pub resource: String,
}

/// How a client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TokenEndpointAuthMethod {
    /// HTTP Basic with the client id and secret.
    ClientSecretBasic,
    /// The client id and secret in the form body.
    ClientSecretPost,
    /// A public client: the client id in the form body, no secret.
    None,
}

impl TokenEndpointAuthMethod {
    /// The registered name (`client_secret_basic`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            TokenEndpointAuthMethod::ClientSecretBasic => "client_secret_basic",
            TokenEndpointAuthMethod::ClientSecretPost => "client_secret_post",
            TokenEndpointAuthMethod::None => "none",
        }
    }

    /// The method of a registered name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "client_secret_basic" => Some(TokenEndpointAuthMethod::ClientSecretBasic),
            "client_secret_post" => Some(TokenEndpointAuthMethod::ClientSecretPost),
            "none" => Some(TokenEndpointAuthMethod::None),
            _ => None,
        }
    }
}

/// A client known to an authorization server: pre-registered, a Client ID Metadata Document
/// URL, or registered dynamically.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientCredentials {
    /// The client id.
    pub client_id: String,
    /// The secret of a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// How it authenticates at the token endpoint (`None`: chosen from the server's
    /// metadata).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_method: Option<TokenEndpointAuthMethod>,
    /// The authorization server that issued them (its issuer identifier): pre-registered
    /// credentials are used with it and with no other. (A registration kept with tokens is
    /// bound by the tokens' [`TokenKey`] instead.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
}

impl ClientCredentials {
    /// A client with an id and a secret.
    pub fn new(client_id: impl Into<String>, client_secret: Option<String>) -> Self {
        ClientCredentials { client_id: client_id.into(), client_secret, auth_method: None, issuer: None }
    }

    /// Binds the credentials to the authorization server `issuer` (its issuer identifier,
    /// exactly as its metadata names it).
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Sets how the client authenticates at the token endpoint.
    pub fn auth_method(mut self, method: TokenEndpointAuthMethod) -> Self {
        self.auth_method = Some(method);
        self
    }
}

/// Tokens, and the client they were issued to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredTokens {
    /// The client.
    pub client: ClientCredentials,
    /// The access token.
    pub access_token: String,
    /// The refresh token, if one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires, in seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes requested (and granted, when the server said).
    #[serde(default)]
    pub scopes: Vec<String>,
}

impl StoredTokens {
    /// Whether the access token expires within `margin`.
    pub fn expires_within(&self, margin: Duration) -> bool {
        let Some(at) = self.expires_at else { return false };
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        now + margin >= Duration::from_secs(at)
    }
}

/// Held while tokens of a key are refreshed (TEMPORARY: replaced by the local lane's).
pub struct TokenLock(#[allow(dead_code)] Option<Box<dyn Send + Sync>>);

impl TokenLock {
    /// No lock.
    pub fn none() -> Self {
        TokenLock(None)
    }
}

/// Keeps tokens between flows. [`MemoryTokenStore`] is the default, [`FileTokenStore`] keeps
/// them in a file (for command-line tools).
pub trait TokenStore: Send + Sync + 'static {
    /// The tokens for `key`.
    fn load(&self, key: &TokenKey) -> BoxFuture<'_, Option<StoredTokens>>;
    /// Keeps `tokens` for `key` (`None` forgets them).
    fn save(&self, key: &TokenKey, tokens: Option<StoredTokens>) -> BoxFuture<'_, ()>;
    /// Excludes other refreshers of `key` until dropped.
    fn lock(&self, key: &TokenKey) -> BoxFuture<'_, TokenLock> {
        let _ = key;
        Box::pin(std::future::ready(TokenLock::none()))
    }
}

/// Tokens in memory, for the life of the process.
#[derive(Debug, Default)]
pub struct MemoryTokenStore(Mutex<HashMap<TokenKey, StoredTokens>>);

impl TokenStore for MemoryTokenStore {
    fn load(&self, key: &TokenKey) -> BoxFuture<'_, Option<StoredTokens>> {
        let found = self.0.lock_unpoisoned().get(key).cloned();
        Box::pin(std::future::ready(found))
    }

    fn save(&self, key: &TokenKey, tokens: Option<StoredTokens>) -> BoxFuture<'_, ()> {
        let mut map = self.0.lock_unpoisoned();
        match tokens {
            Some(t) => map.insert(key.clone(), t),
            None => map.remove(key),
        };
        Box::pin(std::future::ready(()))
    }
}

/// Tokens in a JSON file (created with mode 0600 on Unix), read and written whole on each
/// change: for a command-line tool's few servers.
#[derive(Debug)]
pub struct FileTokenStore {
    path: PathBuf,
    lock: tokio::sync::Mutex<()>,
}

/// One entry of the file.
#[derive(Serialize, Deserialize)]
struct Entry {
    key: TokenKey,
    tokens: StoredTokens,
}

impl FileTokenStore {
    /// A store in the file at `path` (created on the first save).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileTokenStore { path: path.into(), lock: tokio::sync::Mutex::new(()) }
    }

    async fn read(&self) -> Vec<Entry> {
        match tokio::fs::read(&self.path).await {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                tracing::warn!(path = %self.path.display(), error = %e, "the token file is not valid; ignoring it");
                Vec::new()
            }),
            Err(_) => Vec::new(),
        }
    }

    async fn write(&self, entries: &[Entry]) -> std::io::Result<()> {
        let bytes = serde_json::to_vec_pretty(entries).map_err(std::io::Error::other)?;
        if let Some(dir) = self.path.parent() {
            tokio::fs::create_dir_all(dir).await?;
        }
        let tmp = self.path.with_extension("tmp");
        let mut options = tokio::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        options.mode(0o600);
        let mut file = options.open(&tmp).await?;
        tokio::io::AsyncWriteExt::write_all(&mut file, &bytes).await?;
        file.sync_all().await?;
        tokio::fs::rename(&tmp, &self.path).await
    }
}

impl TokenStore for FileTokenStore {
    fn load(&self, key: &TokenKey) -> BoxFuture<'_, Option<StoredTokens>> {
        let key = key.clone();
        Box::pin(async move {
            let _guard = self.lock.lock().await;
            self.read().await.into_iter().find(|e| e.key == key).map(|e| e.tokens)
        })
    }

    fn save(&self, key: &TokenKey, tokens: Option<StoredTokens>) -> BoxFuture<'_, ()> {
        let key = key.clone();
        Box::pin(async move {
            let _guard = self.lock.lock().await;
            let mut entries = self.read().await;
            entries.retain(|e| e.key != key);
            if let Some(tokens) = tokens {
                entries.push(Entry { key, tokens });
            }
            if let Err(e) = self.write(&entries).await {
                tracing::warn!(path = %self.path.display(), error = %e, "cannot write the token file");
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_file_store_keeps_tokens_per_key() {
        let dir = std::env::temp_dir().join(format!("mcp-tokens-{}", std::process::id()));
        let store = FileTokenStore::new(dir.join("tokens.json"));
        let key = |r: &str| TokenKey { issuer: "https://as".into(), resource: r.into() };
        let tokens = StoredTokens {
            client: ClientCredentials::new("c", None),
            access_token: "a".into(),
            refresh_token: Some("r".into()),
            expires_at: Some(1),
            scopes: vec!["s".into()],
        };
        assert_eq!(store.load(&key("x")).await, None);
        store.save(&key("x"), Some(tokens.clone())).await;
        store.save(&key("y"), Some(StoredTokens { access_token: "b".into(), ..tokens.clone() })).await;
        assert_eq!(store.load(&key("x")).await, Some(tokens.clone()));
        assert!(tokens.expires_within(Duration::ZERO), "expired in 1970");
        store.save(&key("x"), None).await;
        assert_eq!(store.load(&key("x")).await, None);
        assert_eq!(store.load(&key("y")).await.unwrap().access_token, "b");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(dir.join("tokens.json")).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}
