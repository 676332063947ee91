//! Where tokens and registered clients are kept between flows (and, with a file store,
//! between runs).

use std::collections::HashMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
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
/// URL, or registered dynamically. `Debug` shows whether there is a secret, not the secret.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
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

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| Redacted))
            .field("auth_method", &self.auth_method)
            .field("issuer", &self.issuer)
            .finish()
    }
}

/// Stands for a secret in `Debug` output.
struct Redacted;

impl std::fmt::Debug for Redacted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
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

/// Tokens, and the client they were issued to. `Debug` shows which tokens there are, not
/// the tokens.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    /// For a DPoP-bound access token (`token_type` `DPoP`, RFC 9449): the thumbprint of the
    /// key it is bound to; `None` for a bearer token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_jkt: Option<String>,
}

impl std::fmt::Debug for StoredTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredTokens")
            .field("client", &self.client)
            .field("access_token", &Redacted)
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| Redacted))
            .field("expires_at", &self.expires_at)
            .field("scopes", &self.scopes)
            .field("dpop_jkt", &self.dpop_jkt)
            .finish()
    }
}

impl StoredTokens {
    /// Whether the access token expires within `margin`.
    pub fn expires_within(&self, margin: Duration) -> bool {
        let Some(at) = self.expires_at else { return false };
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        now + margin >= Duration::from_secs(at)
    }
}

/// Held while the tokens of a key are refreshed: other holders of the same store (other
/// [`OAuthClient`](super::OAuthClient)s, other processes sharing a [`FileTokenStore`]'s file)
/// wait for it, so that a rotating refresh token is presented once. Released when dropped.
#[must_use = "the lock is released when dropped"]
pub struct TokenLock {
    guard: Option<Box<dyn Send + Sync>>,
}

impl TokenLock {
    /// A lock that excludes nothing (a store whose tokens no one else refreshes).
    pub fn none() -> Self {
        TokenLock { guard: None }
    }

    /// A lock held as long as `guard` lives.
    pub fn new(guard: impl Send + Sync + 'static) -> Self {
        TokenLock { guard: Some(Box::new(guard)) }
    }
}

impl std::fmt::Debug for TokenLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenLock").field("excludes", &self.guard.is_some()).finish()
    }
}

/// Keeps tokens between flows. [`MemoryTokenStore`] is the default, [`FileTokenStore`] keeps
/// them in a file (for command-line tools).
pub trait TokenStore: Send + Sync + 'static {
    /// The tokens for `key`.
    fn load(&self, key: &TokenKey) -> BoxFuture<'_, Option<StoredTokens>>;
    /// Keeps `tokens` for `key` (`None` forgets them).
    fn save(&self, key: &TokenKey, tokens: Option<StoredTokens>) -> BoxFuture<'_, ()>;
    /// Excludes every other holder of this store (other OAuthClients, other processes
    /// sharing the file) from refreshing `key` until the returned lock is dropped. The
    /// caller `load`s again after taking it (another holder may have refreshed meanwhile)
    /// and `save`s before dropping it: `load` and `save` must not deadlock while the lock is
    /// held. A store may exclude more than `key` (the stores here lock all their keys at
    /// once), so a holder takes no second lock while it holds one. Default:
    /// [`TokenLock::none()`].
    fn lock(&self, key: &TokenKey) -> BoxFuture<'_, TokenLock> {
        let _ = key;
        Box::pin(std::future::ready(TokenLock::none()))
    }
}

/// Tokens in memory, for the life of the process. Its [`lock`](TokenStore::lock) serialises
/// the refreshes of the clients sharing it (one at a time, whatever the key). `Debug` shows
/// the keys only.
#[derive(Default)]
pub struct MemoryTokenStore {
    tokens: Mutex<HashMap<TokenKey, StoredTokens>>,
    refreshing: Arc<tokio::sync::Mutex<()>>,
}

impl std::fmt::Debug for MemoryTokenStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys: Vec<TokenKey> = self.tokens.lock_unpoisoned().keys().cloned().collect();
        f.debug_struct("MemoryTokenStore").field("keys", &keys).finish_non_exhaustive()
    }
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, key: &TokenKey) -> BoxFuture<'_, Option<StoredTokens>> {
        let found = self.tokens.lock_unpoisoned().get(key).cloned();
        Box::pin(std::future::ready(found))
    }

    fn save(&self, key: &TokenKey, tokens: Option<StoredTokens>) -> BoxFuture<'_, ()> {
        let mut map = self.tokens.lock_unpoisoned();
        match tokens {
            Some(t) => map.insert(key.clone(), t),
            None => map.remove(key),
        };
        Box::pin(std::future::ready(()))
    }

    fn lock(&self, _key: &TokenKey) -> BoxFuture<'_, TokenLock> {
        Box::pin(async move { TokenLock::new(self.refreshing.clone().lock_owned().await) })
    }
}

/// Tokens in a JSON file, read and written whole on each change: for a command-line tool's
/// few servers.
///
/// - Each save writes a new file (a fresh name in the same directory, created exclusively
///   with mode 0600, so no link planted there is followed) and renames it over the old one:
///   readers see the old file or the new one, never half of one, and the file is 0600
///   whatever it was before.
/// - Saves take an advisory lock on `<file>.lock` (`flock` on Unix) for their read-modify-write,
///   so that stores in other processes sharing the file lose none of each other's changes;
///   [`lock`](TokenStore::lock) takes one on `<file>.refresh-lock`, so that one process at a
///   time refreshes (all keys of the file at once). Where a lock cannot be taken (a
///   file system without locks, a read-only directory) a warning is logged and the store
///   goes on without it.
/// - A file that cannot be read (other than a missing one) or is not a token list is never
///   replaced: loads find nothing and saves are refused, each with a warning, until it is
///   repaired or removed.
#[derive(Debug)]
pub struct FileTokenStore {
    path: PathBuf,
    /// Takes turns between this store's own saves (the file lock excludes the others).
    saving: tokio::sync::Mutex<()>,
    /// Takes turns between this store's own refreshes (the file lock excludes the others).
    refreshing: Arc<tokio::sync::Mutex<()>>,
}

/// One entry of the file.
#[derive(Serialize, Deserialize)]
struct Entry {
    key: TokenKey,
    tokens: StoredTokens,
}

/// Why the token file was not read.
#[derive(Debug)]
enum Unreadable {
    Io(std::io::Error),
    Invalid(serde_json::Error),
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreadable::Io(e) => write!(f, "cannot read it: {e}"),
            Unreadable::Invalid(e) => write!(f, "it is not a token list: {e}"),
        }
    }
}

/// The entries of a read of the token file: none if it does not exist.
fn entries(read: std::io::Result<Vec<u8>>) -> Result<Vec<Entry>, Unreadable> {
    match read {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(Unreadable::Invalid),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(Unreadable::Io(e)),
    }
}

impl FileTokenStore {
    /// A store in the file at `path` (created on the first save).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileTokenStore {
            path: path.into(),
            saving: tokio::sync::Mutex::new(()),
            refreshing: Arc::new(tokio::sync::Mutex::new(())),
        }
    }

    /// The file beside the token file named after it with `suffix`.
    fn beside(&self, suffix: &str) -> PathBuf {
        let mut name = self.path.file_name().unwrap_or_else(|| "tokens".as_ref()).to_os_string();
        name.push(suffix);
        self.path.with_file_name(name)
    }
}

/// Opens (creating it, mode 0600) the lock file at `path` and locks it exclusively, waiting
/// for other holders.
fn lock_file(path: &Path) -> std::io::Result<std::fs::File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(path)?;
    file.lock()?;
    Ok(file)
}

/// Reads the token file, changes `key`'s entry and writes it back, holding the lock file
/// `lock` meanwhile. Refuses to replace a file it cannot read.
fn save_blocking(path: &Path, lock: &Path, key: TokenKey, tokens: Option<StoredTokens>) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create the token file's directory: {e}"))?;
    }
    let _locked = lock_file(lock)
        .inspect_err(|e| {
            tracing::warn!(path = %lock.display(), error = %e, "cannot lock the token file; saving without the lock");
        })
        .ok();
    let mut entries = entries(std::fs::read(path)).map_err(|e| format!("not replacing the token file: {e}"))?;
    entries.retain(|e| e.key != key);
    if let Some(tokens) = tokens {
        entries.push(Entry { key, tokens });
    }
    let bytes = serde_json::to_vec_pretty(&entries).map_err(|e| e.to_string())?;
    write_new(path, &bytes).map_err(|e| format!("cannot write the token file: {e}"))
}

/// Writes `bytes` to a new file beside `path` (a fresh name, created exclusively with mode
/// 0600) and renames it to `path`.
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| std::io::Error::other("the token file has no name"))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", super::pkce::random_token()));
    let tmp = dir.join(tmp_name);
    let mut options = std::fs::OpenOptions::new();
    // `create_new` fails on anything already there, a symbolic link included.
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&tmp)?;
    let written = (|| {
        // The umask may have taken bits away; the mode is 0600 whatever it is.
        #[cfg(unix)]
        file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    // The rename itself survives a crash once the directory is synced too.
    #[cfg(unix)]
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

impl TokenStore for FileTokenStore {
    fn load(&self, key: &TokenKey) -> BoxFuture<'_, Option<StoredTokens>> {
        let key = key.clone();
        Box::pin(async move {
            // Saves replace the file whole: a read sees one version, no lock needed.
            match entries(tokio::fs::read(&self.path).await) {
                Ok(entries) => entries.into_iter().find(|e| e.key == key).map(|e| e.tokens),
                Err(e) => {
                    tracing::warn!(path = %self.path.display(), "ignoring the token file: {e}");
                    None
                }
            }
        })
    }

    fn save(&self, key: &TokenKey, tokens: Option<StoredTokens>) -> BoxFuture<'_, ()> {
        let key = key.clone();
        Box::pin(async move {
            let _turn = self.saving.lock().await;
            let (path, lock) = (self.path.clone(), self.beside(".lock"));
            let saved = tokio::task::spawn_blocking(move || save_blocking(&path, &lock, key, tokens)).await;
            match saved {
                Ok(Ok(())) => {}
                Ok(Err(why)) => tracing::warn!(path = %self.path.display(), "{why}"),
                Err(e) => tracing::warn!(path = %self.path.display(), error = %e, "the token file was not saved"),
            }
        })
    }

    fn lock(&self, _key: &TokenKey) -> BoxFuture<'_, TokenLock> {
        Box::pin(async move {
            let turn = self.refreshing.clone().lock_owned().await;
            let path = self.beside(".refresh-lock");
            let locked = {
                let path = path.clone();
                tokio::task::spawn_blocking(move || lock_file(&path)).await.map_err(std::io::Error::other)
            };
            match locked.and_then(|r| r) {
                Ok(file) => TokenLock::new((turn, file)),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "cannot lock the token file; refreshing without the lock");
                    TokenLock::new(turn)
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// A fresh directory for one test.
    fn fresh_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mcp-tokens-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn key(resource: &str) -> TokenKey {
        TokenKey { issuer: "https://as".into(), resource: resource.into() }
    }

    fn tokens(access: &str) -> StoredTokens {
        StoredTokens {
            client: ClientCredentials::new("c", Some("client-secret-1".into())),
            access_token: access.into(),
            refresh_token: Some("refresh-token-1".into()),
            expires_at: None,
            scopes: Vec::new(),
            dpop_jkt: None,
        }
    }

    #[cfg(unix)]
    fn mode(path: &std::path::Path) -> u32 {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn debug_output_shows_no_secret() {
        let store = MemoryTokenStore::default();
        let t = StoredTokens { access_token: "access-token-1".into(), ..tokens("") };
        futures_util::FutureExt::now_or_never(store.save(&key("x"), Some(t.clone()))).unwrap();
        for text in [format!("{t:?}"), format!("{:?}", t.client), format!("{store:?}"), format!("{t:#?}")] {
            for secret in ["access-token-1", "refresh-token-1", "client-secret-1"] {
                assert!(!text.contains(secret), "{secret} in {text}");
            }
        }
        let shown = format!("{t:?}");
        assert!(shown.contains("\"c\"") && shown.contains("<redacted>"), "{shown}");
    }

    /// A symlink planted at the temporary path the store used to write (`tokens.tmp`) is not
    /// written through: its target keeps its content.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_symlink_at_the_old_temporary_path_is_not_followed() {
        let dir = fresh_dir("symlink");
        let victim = dir.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("tokens.tmp")).unwrap();
        let store = FileTokenStore::new(dir.join("tokens.json"));
        store.save(&key("x"), Some(tokens("a"))).await;
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(std::fs::symlink_metadata(dir.join("tokens.json")).unwrap().file_type().is_file());
        assert_eq!(store.load(&key("x")).await.unwrap().access_token, "a");
        let _ = std::fs::remove_dir_all(dir);
    }

    /// The file ends 0600 whatever the mode of the file it replaces or of a temporary file
    /// left over by an earlier run.
    #[cfg(unix)]
    #[tokio::test]
    async fn the_file_ends_0600_whatever_was_there() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = fresh_dir("mode");
        let file = dir.join("tokens.json");
        for path in [&file, &dir.join("tokens.tmp")] {
            std::fs::write(path, "[]").unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        FileTokenStore::new(&file).save(&key("x"), Some(tokens("a"))).await;
        assert_eq!(mode(&file), 0o600);
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A file that is not a token list is neither read as an empty store nor replaced by the
    /// next save.
    #[tokio::test]
    async fn a_garbled_file_is_not_overwritten() {
        let dir = fresh_dir("garbled");
        let file = dir.join("tokens.json");
        std::fs::write(&file, "{ half a token file").unwrap();
        let store = FileTokenStore::new(&file);
        assert_eq!(store.load(&key("x")).await, None);
        store.save(&key("x"), Some(tokens("a"))).await;
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "{ half a token file");
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A path that cannot be read (here a Unix socket, which `open` refuses with ENXIO even
    /// to root; a file without read permission goes the same way) is not replaced either.
    #[cfg(unix)]
    #[tokio::test]
    async fn an_unreadable_file_is_not_overwritten() {
        let dir = fresh_dir("unreadable");
        let file = dir.join("tokens.json");
        let _socket = std::os::unix::net::UnixListener::bind(&file).unwrap();
        let store = FileTokenStore::new(&file);
        assert_eq!(store.load(&key("x")).await, None);
        store.save(&key("x"), Some(tokens("a"))).await;
        use std::os::unix::fs::FileTypeExt as _;
        assert!(std::fs::symlink_metadata(&file).unwrap().file_type().is_socket(), "replaced");
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A second store on the file (another process, in effect: it opens the file itself)
    /// waits for the first one's refresh, then finds the refreshed tokens; the holder saves
    /// while it holds the lock without deadlocking.
    #[tokio::test]
    async fn a_second_store_waits_for_the_first_ones_refresh() {
        let dir = fresh_dir("lock");
        let file = dir.join("tokens.json");
        let (first, second) = (FileTokenStore::new(&file), FileTokenStore::new(&file));
        first.save(&key("x"), Some(tokens("old"))).await;
        let held = first.lock(&key("x")).await;
        let (locking, about_to_lock) = tokio::sync::oneshot::channel();
        let waiting = tokio::spawn(async move {
            locking.send(()).unwrap();
            let _lock = second.lock(&key("x")).await;
            second.load(&key("x")).await.map(|t| t.access_token)
        });
        about_to_lock.await.unwrap();
        first.save(&key("x"), Some(tokens("refreshed"))).await;
        assert_eq!(first.load(&key("x")).await.unwrap().access_token, "refreshed");
        drop(held);
        assert_eq!(waiting.await.unwrap().as_deref(), Some("refreshed"));
        let _ = std::fs::remove_dir_all(dir);
    }

    /// Two clients sharing one memory store take turns too.
    #[tokio::test]
    async fn clients_sharing_a_memory_store_refresh_in_turn() {
        let store = Arc::new(MemoryTokenStore::default());
        store.save(&key("x"), Some(tokens("old"))).await;
        let held = store.lock(&key("x")).await;
        let (locking, about_to_lock) = tokio::sync::oneshot::channel();
        let second = store.clone();
        let waiting = tokio::spawn(async move {
            locking.send(()).unwrap();
            let _lock = second.lock(&key("x")).await;
            second.load(&key("x")).await.map(|t| t.access_token)
        });
        about_to_lock.await.unwrap();
        store.save(&key("x"), Some(tokens("refreshed"))).await;
        drop(held);
        assert_eq!(waiting.await.unwrap().as_deref(), Some("refreshed"));
    }

    /// Where no lock file can be made the store warns and goes on: `lock` does not fail or
    /// hang.
    #[tokio::test]
    async fn a_store_that_cannot_lock_goes_on_without() {
        let dir = fresh_dir("nolock");
        std::fs::write(dir.join("file"), "").unwrap();
        let store = FileTokenStore::new(dir.join("file/tokens.json"));
        let lock = store.lock(&key("x")).await;
        store.save(&key("x"), Some(tokens("a"))).await;
        assert_eq!(store.load(&key("x")).await, None);
        drop(lock);
        let _ = std::fs::remove_dir_all(dir);
    }

    /// Set in the process that plays the other `mcp proxy`: the token file.
    const OTHER_PROCESS: &str = "MCP_TOKEN_STORE_OTHER_PROCESS";

    /// Another process (this test binary, run again as the other party) waits for this
    /// one's refresh lock, finds the refreshed tokens once it has it, and the saves both
    /// make at once afterwards all arrive.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn another_process_waits_for_the_refresh_and_loses_no_save() {
        let saves = |store: Arc<FileTokenStore>, prefix: &'static str| async move {
            let mut saving = tokio::task::JoinSet::new();
            for i in 0..20 {
                let store = store.clone();
                saving.spawn(async move {
                    store.save(&key(&format!("{prefix}{i}")), Some(tokens(&format!("{prefix}{i}")))).await
                });
            }
            saving.join_all().await;
        };
        if let Some(file) = std::env::var_os(OTHER_PROCESS) {
            let store = Arc::new(FileTokenStore::new(PathBuf::from(file)));
            println!("locking");
            let lock = store.lock(&key("x")).await;
            println!("found {:?}", store.load(&key("x")).await.map(|t| t.access_token));
            drop(lock);
            saves(store, "child").await;
            return;
        }
        let dir = fresh_dir("processes");
        let file = dir.join("tokens.json");
        let store = Arc::new(FileTokenStore::new(&file));
        store.save(&key("x"), Some(tokens("old"))).await;
        let held = store.lock(&key("x")).await;
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "client::oauth::store::tests::another_process_waits_for_the_refresh_and_loses_no_save"])
            .arg("--nocapture")
            .env(OTHER_PROCESS, &file)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let (lines_tx, lines) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            use std::io::BufRead as _;
            for line in std::io::BufReader::new(stdout).lines() {
                let _ = lines_tx.send(line.unwrap());
            }
        });
        let lines = Arc::new(Mutex::new(lines));
        let next = |lines: Arc<Mutex<std::sync::mpsc::Receiver<String>>>, prefix: &'static str| async move {
            tokio::task::spawn_blocking(move || {
                let lines = lines.lock().unwrap();
                loop {
                    let line = lines.recv().expect("the other process ended early");
                    if line.starts_with(prefix) {
                        return line;
                    }
                }
            })
            .await
            .unwrap()
        };
        next(lines.clone(), "locking").await;
        store.save(&key("x"), Some(tokens("refreshed"))).await;
        drop(held);
        assert_eq!(next(lines.clone(), "found").await, "found Some(\"refreshed\")");
        saves(store.clone(), "parent").await;
        let status = tokio::task::spawn_blocking(move || child.wait().unwrap()).await.unwrap();
        assert!(status.success());
        for i in 0..20 {
            for prefix in ["parent", "child"] {
                let found = store.load(&key(&format!("{prefix}{i}"))).await;
                assert_eq!(found.map(|t| t.access_token), Some(format!("{prefix}{i}")), "{prefix}{i} lost");
            }
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    /// Only a missing file is an empty store; any other read error (permission denied, which
    /// a test running as root cannot produce; EIO) leaves the file alone, as a garbled one.
    #[test]
    fn only_a_missing_file_is_an_empty_store() {
        assert!(entries(Err(ErrorKind::NotFound.into())).unwrap().is_empty());
        for kind in [ErrorKind::PermissionDenied, ErrorKind::Other, ErrorKind::InvalidData] {
            assert!(matches!(entries(Err(kind.into())), Err(Unreadable::Io(_))), "{kind:?}");
        }
        assert!(matches!(entries(Ok(b"[{}]".to_vec())), Err(Unreadable::Invalid(_))));
    }

    /// Two stores on one file (two processes, in effect: each opens the file itself) saving
    /// different keys at once lose none of them.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_saves_of_two_stores_lose_nothing() {
        let dir = fresh_dir("concurrent");
        let file = dir.join("tokens.json");
        let stores = [Arc::new(FileTokenStore::new(&file)), Arc::new(FileTokenStore::new(&file))];
        let mut saving = tokio::task::JoinSet::new();
        for i in 0..40 {
            let store = stores[i % 2].clone();
            saving.spawn(async move { store.save(&key(&format!("r{i}")), Some(tokens(&format!("t{i}")))).await });
        }
        saving.join_all().await;
        for i in 0..40 {
            let found = stores[0].load(&key(&format!("r{i}"))).await;
            assert_eq!(found.map(|t| t.access_token), Some(format!("t{i}")), "r{i} lost");
        }
        let _ = std::fs::remove_dir_all(dir);
    }

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
            dpop_jkt: None,
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
