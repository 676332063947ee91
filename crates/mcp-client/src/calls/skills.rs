//! The Skills extension (SEP-2640, `io.modelcontextprotocol/skills`) from the client: list a
//! server's skills, get one, load one (its `SKILL.md` read and checked against the entry:
//! size, digest, frontmatter) and read its files (each checked against the entry). Nothing is
//! read ahead: listing reads no file, and each file is read when asked for. A `"dynamic"`
//! skill is loaded only on opt-in ([`Client::load_dynamic_skill`]), and its files read with
//! [`Client::read_dynamic_skill_file`], within the load's 16 MiB.
//!
//! ```no_run
//! # async fn run(client: mcp_client::Client) -> Result<(), mcp_client::skills::SkillError> {
//! for skill in client.list_skills().await? {
//!     println!("{}: {}", skill.uri, skill.description().unwrap_or_default());
//! }
//! let skill = client.get_skill("skill://greeting/SKILL.md").await?;
//! let loaded = client.load_skill(&skill).await?; // verified
//! let tone = client.read_skill_file(&skill, "skill://greeting/references/TONE.md").await?;
//! # let _ = (loaded, tone); Ok(()) }
//! ```

use base64::Engine as _;
use mcp_types::skills::{
    EXTENSION, GetSkill, GetSkillParams, ListSkills, ListSkillsParams, MAX_TOTAL_SIZE, ReadDirectory,
    ReadDirectoryParams, ReadDirectoryResult, Skill, SkillResources,
};
use mcp_types::{AnyResourceContents, JsonObject};

use crate::client::Client;
use crate::error::ClientError;

/// The most pages [`Client::list_skills`] reads.
const MAX_PAGES: usize = 1000;

/// Why a skill could not be listed, loaded or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// The server did not declare the Skills extension.
    #[error("the server does not declare the skills extension ({EXTENSION})")]
    NotDeclared,
    /// The request failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The entry is not one a host may load (its `resources` is `"dynamic"`, or it does not
    /// list its own `SKILL.md`).
    #[error("skill {uri}: {reason}")]
    Entry {
        /// The skill's URI.
        uri: String,
        /// What is wrong.
        reason: String,
    },
    /// The file is not listed in the skill's entry (for a dynamic skill: it does not lie
    /// inside the skill's directory).
    #[error("{uri} is not a file of skill {skill}")]
    Unlisted {
        /// The skill's URI.
        skill: String,
        /// The file asked for.
        uri: String,
    },
    /// What the server sent is not what the entry describes (size, digest, frontmatter): the
    /// content is not used. Refresh the entry ([`Client::get_skill`]) to recover from a
    /// stale one.
    #[error("{uri} fails verification: {reason}")]
    Verification {
        /// The file.
        uri: String,
        /// What differs.
        reason: String,
    },
    /// A dynamic skill's content is over the extension's total-size limit
    /// ([`MAX_TOTAL_SIZE`](mcp_types::skills::MAX_TOTAL_SIZE) bytes): not used.
    #[error("{uri}: {size} bytes retrieved, over the {limit}-byte limit of a skill")]
    TooLarge {
        /// The file.
        uri: String,
        /// How many bytes were retrieved.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The server sent another page cursor again, or too many pages.
    #[error("skills/list did not end: {0}")]
    Paging(String),
}

/// A skill loaded: its entry, and its `SKILL.md`, verified against it.
#[derive(Debug, Clone)]
pub struct LoadedSkill {
    /// The entry it was verified against.
    pub entry: Skill,
    /// The text of its `SKILL.md`.
    pub instructions: String,
    /// The bytes retrieved for this load so far: its `SKILL.md` (every contents item of the
    /// read), then each file read with
    /// [`read_dynamic_skill_file`](Client::read_dynamic_skill_file). A dynamic skill's are
    /// held to the extension's total-size limit
    /// ([`MAX_TOTAL_SIZE`](mcp_types::skills::MAX_TOTAL_SIZE)).
    pub retrieved: u64,
}

impl Client {
    /// Whether the server declared the Skills extension.
    pub fn supports_skills(&self) -> bool {
        self.server_extension(EXTENSION).is_some()
    }

    /// Every skill the server lists (`skills/list`, page after page). Reads no file.
    pub async fn list_skills(&self) -> Result<Vec<Skill>, SkillError> {
        self.need_skills()?;
        let mut skills = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let page = self.request::<ListSkills>(ListSkillsParams { cursor: cursor.take() }).await?;
            skills.extend(page.skills);
            match page.next_cursor {
                Some(next) if !next.is_empty() => {
                    if !seen.insert(next.clone()) {
                        return Err(SkillError::Paging(format!("cursor {next:?} came twice")));
                    }
                    cursor = Some(next);
                }
                _ => return Ok(skills),
            }
        }
        Err(SkillError::Paging(format!("more than {MAX_PAGES} pages")))
    }

    /// The entry of the skill whose `SKILL.md` is at `uri` (`skills/get`): a skill the listing
    /// left out, or a fresh entry for one.
    pub async fn get_skill(&self, uri: &str) -> Result<Skill, SkillError> {
        self.need_skills()?;
        Ok(self.request::<GetSkill>(GetSkillParams { uri: uri.to_owned() }).await?.skill)
    }

    /// Loads `skill`: reads its `SKILL.md` and checks it against the entry (size and digest,
    /// then its frontmatter, field by field). A skill whose files are `"dynamic"` has nothing
    /// to check the file against and is refused ([`SkillError::Entry`]); a host that accepts
    /// such skills loads them with [`load_dynamic_skill`](Self::load_dynamic_skill).
    pub async fn load_skill(&self, skill: &Skill) -> Result<LoadedSkill, SkillError> {
        if matches!(skill.resources, SkillResources::Dynamic(_)) {
            return Err(SkillError::Entry { uri: skill.uri.clone(), reason: "its files are \"dynamic\"".into() });
        }
        if skill.file(&skill.uri).is_none() {
            return Err(SkillError::Entry {
                uri: skill.uri.clone(),
                reason: "its entry does not list its SKILL.md".into(),
            });
        }
        let bytes = self.read_skill_file(skill, &skill.uri).await?;
        let retrieved = bytes.len() as u64;
        verified(skill, bytes, retrieved)
    }

    /// Loads `skill` as [`load_skill`](Self::load_skill) does, and also a skill whose files
    /// are `"dynamic"` (the host's opt-in: the specification lets hosts decline them). Such a
    /// `SKILL.md` has no digest or size to check: its frontmatter is still checked against
    /// the entry's, field by field, and what is retrieved is refused once over the
    /// extension's total-size limit ([`SkillError::TooLarge`]).
    pub async fn load_dynamic_skill(&self, skill: &Skill) -> Result<LoadedSkill, SkillError> {
        if !matches!(skill.resources, SkillResources::Dynamic(_)) {
            return self.load_skill(skill).await;
        }
        let verification = |reason: String| SkillError::Verification { uri: skill.uri.clone(), reason };
        let result = self.read_resource(&skill.uri).await?;
        // Every contents item retrieved counts towards the limit; the first is the SKILL.md.
        let mut first = None;
        let mut total: u64 = 0;
        for contents in result.contents {
            let item = match contents {
                AnyResourceContents::TextResourceContents(t) => t.text.into_bytes(),
                AnyResourceContents::BlobResourceContents(b) => base64::engine::general_purpose::STANDARD
                    .decode(b.blob.as_bytes())
                    .map_err(|e| verification(format!("blob is not base64: {e}")))?,
            };
            total = total.saturating_add(item.len() as u64);
            if total > MAX_TOTAL_SIZE {
                return Err(SkillError::TooLarge { uri: skill.uri.clone(), size: total, limit: MAX_TOTAL_SIZE });
            }
            first.get_or_insert(item);
        }
        verified(skill, first.ok_or_else(|| verification("no contents".into()))?, total)
    }

    /// Reads the file `uri` of a skill loaded with
    /// [`load_dynamic_skill`](Self::load_dynamic_skill) (`resources/read`). For a dynamic
    /// skill, `uri` must lie inside the skill's directory (`skill://<skill path>/<file path>`,
    /// no empty, `.` or `..` segment: else [`SkillError::Unlisted`], and nothing is read); the
    /// file has nothing to be checked against, and what the read retrieves (every contents
    /// item) is added to `loaded.retrieved`: once that is over the extension's total-size
    /// limit the content is refused ([`SkillError::TooLarge`]), and so is every later read of
    /// this load, since the skill as retrieved is over the limit. A static skill's file is
    /// read and checked as [`read_skill_file`](Self::read_skill_file) does (its entry bounds
    /// its size).
    pub async fn read_dynamic_skill_file(&self, loaded: &mut LoadedSkill, uri: &str) -> Result<Vec<u8>, SkillError> {
        let skill = &loaded.entry;
        if !matches!(skill.resources, SkillResources::Dynamic(_)) {
            let bytes = self.read_skill_file(skill, uri).await?;
            loaded.retrieved = loaded.retrieved.saturating_add(bytes.len() as u64);
            return Ok(bytes);
        }
        let unlisted = || SkillError::Unlisted { skill: skill.uri.clone(), uri: uri.to_owned() };
        let dir = skill.uri.strip_suffix(mcp_types::skills::SKILL_MD).filter(|d| d.ends_with('/'));
        let path = dir.and_then(|dir| uri.strip_prefix(dir)).ok_or_else(unlisted)?;
        let clean = path.split('/').all(|s| {
            let decoded = s.to_ascii_lowercase().replace("%2e", ".");
            !s.is_empty() && decoded != "." && decoded != ".." && !s.contains('\\')
        });
        if !clean {
            return Err(unlisted());
        }
        if loaded.retrieved > MAX_TOTAL_SIZE {
            let size = loaded.retrieved;
            return Err(SkillError::TooLarge { uri: uri.to_owned(), size, limit: MAX_TOTAL_SIZE });
        }
        let verification = |reason: String| SkillError::Verification { uri: uri.to_owned(), reason };
        let result = self.read_resource(uri).await?;
        let mut first = None;
        for contents in result.contents {
            let item = match contents {
                AnyResourceContents::TextResourceContents(t) => t.text.into_bytes(),
                AnyResourceContents::BlobResourceContents(b) => base64::engine::general_purpose::STANDARD
                    .decode(b.blob.as_bytes())
                    .map_err(|e| verification(format!("blob is not base64: {e}")))?,
            };
            loaded.retrieved = loaded.retrieved.saturating_add(item.len() as u64);
            if loaded.retrieved > MAX_TOTAL_SIZE {
                let size = loaded.retrieved;
                return Err(SkillError::TooLarge { uri: uri.to_owned(), size, limit: MAX_TOTAL_SIZE });
            }
            first.get_or_insert(item);
        }
        first.ok_or_else(|| verification("no contents".into()))
    }

    /// Reads the file `uri` of `skill` (`resources/read`) and checks it against the entry:
    /// listed, of its size, of its digest. Content that fails is not returned.
    pub async fn read_skill_file(&self, skill: &Skill, uri: &str) -> Result<Vec<u8>, SkillError> {
        let listed =
            skill.file(uri).ok_or_else(|| SkillError::Unlisted { skill: skill.uri.clone(), uri: uri.into() })?;
        let result = self.read_resource(uri).await?;
        let verification = |reason: String| SkillError::Verification { uri: uri.to_owned(), reason };
        let contents = result.contents.into_iter().next().ok_or_else(|| verification("no contents".into()))?;
        let bytes = match contents {
            AnyResourceContents::TextResourceContents(t) => t.text.into_bytes(),
            AnyResourceContents::BlobResourceContents(b) => base64::engine::general_purpose::STANDARD
                .decode(b.blob.as_bytes())
                .map_err(|e| verification(format!("blob is not base64: {e}")))?,
        };
        if bytes.len() as u64 != listed.size {
            return Err(verification(format!("{} bytes, the entry says {}", bytes.len(), listed.size)));
        }
        if mcp_types::skills::digest(&bytes) != listed.digest {
            return Err(verification(format!("its digest is not the entry's {}", listed.digest)));
        }
        Ok(bytes)
    }

    /// The direct children of the directory `uri` (`resources/directory/read`, one page from
    /// `cursor`), if the server declared `directoryRead`.
    pub async fn read_directory(&self, uri: &str, cursor: Option<String>) -> Result<ReadDirectoryResult, SkillError> {
        let declared = self.server_extension(EXTENSION).ok_or(SkillError::NotDeclared)?;
        if declared.get("directoryRead").and_then(|v| v.as_bool()) != Some(true) {
            return Err(ClientError::NotSupported("skills.directoryRead").into());
        }
        Ok(self.request::<ReadDirectory>(ReadDirectoryParams { uri: uri.to_owned(), cursor }).await?)
    }

    fn need_skills(&self) -> Result<(), SkillError> {
        if self.supports_skills() { Ok(()) } else { Err(SkillError::NotDeclared) }
    }
}

/// `bytes` as the `SKILL.md` of `skill`, if UTF-8 with the entry's frontmatter; `retrieved`
/// bytes were read for it.
fn verified(skill: &Skill, bytes: Vec<u8>, retrieved: u64) -> Result<LoadedSkill, SkillError> {
    let verification = |reason: String| SkillError::Verification { uri: skill.uri.clone(), reason };
    let text = String::from_utf8(bytes).map_err(|_| verification("SKILL.md is not UTF-8".into()))?;
    let front = mcp_types::skills::frontmatter(&text).map_err(|e| verification(e.to_string()))?;
    if let Some(field) = differing_field(&front, &skill.frontmatter) {
        return Err(verification(format!("frontmatter field `{field}` differs from the entry's")));
    }
    Ok(LoadedSkill { entry: skill.clone(), instructions: text, retrieved })
}

/// The first field on which two frontmatter objects differ, if any (a missing field and
/// `null` are the same).
fn differing_field(a: &JsonObject, b: &JsonObject) -> Option<String> {
    let null = serde_json::Value::Null;
    a.keys().chain(b.keys()).find(|k| a.get(*k).unwrap_or(&null) != b.get(*k).unwrap_or(&null)).cloned()
}
