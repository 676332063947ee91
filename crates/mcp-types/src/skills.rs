//! The Skills extension (SEP-2640, `io.modelcontextprotocol/skills`): Agent Skills served as
//! resources. The wire types of its three methods (`skills/list`, `skills/get`,
//! `resources/directory/read`), the `sha256:` digest of a file, and the `SKILL.md`
//! frontmatter read as the JSON object a skill entry carries.

use serde::{Deserialize, Serialize};
use sha2::Digest as _;

use crate::{CacheScope, CustomRequest, JsonObject, Resource};

/// The extension's identifier under `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The URI scheme skills are served under.
pub const SCHEME: &str = "skill://";

/// The file at the root of every skill.
pub const SKILL_MD: &str = "SKILL.md";

/// The `mimeType` of a directory resource (`resources/directory/read`).
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// The most files a host must accept in one skill.
pub const MAX_FILES: usize = 512;

/// The largest total size, in bytes, a host must accept for one skill.
pub const MAX_TOTAL_SIZE: u64 = 16 * 1024 * 1024;

/// One file of a skill: its URI, the digest and the size of its raw bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillResource {
    /// The file's resource URI.
    pub uri: String,
    /// `sha256:` and 64 lowercase hex digits (see [`digest`]).
    pub digest: String,
    /// Its length in bytes.
    pub size: u64,
}

/// The `"dynamic"` marker of a skill whose files have no stable digests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Dynamic {
    /// `"dynamic"`.
    #[serde(rename = "dynamic")]
    Dynamic,
}

/// A skill's files: every one, with digests, or `"dynamic"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SkillResources {
    /// The complete list of its files, `SKILL.md` included.
    Files(Vec<SkillResource>),
    /// Generated content: no list, no digests.
    Dynamic(Dynamic),
}

/// The entry of one skill, as `skills/list` and `skills/get` return it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// The URI of its `SKILL.md`.
    pub uri: String,
    /// The `SKILL.md` frontmatter as JSON (`name` and `description` at least).
    pub frontmatter: JsonObject,
    /// Its files.
    pub resources: SkillResources,
}

impl Skill {
    /// The `name` of its frontmatter.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(|n| n.as_str())
    }

    /// The `description` of its frontmatter.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(|n| n.as_str())
    }

    /// The listed file at `uri`, if the entry lists it.
    pub fn file(&self, uri: &str) -> Option<&SkillResource> {
        match &self.resources {
            SkillResources::Files(files) => files.iter().find(|f| f.uri == uri),
            SkillResources::Dynamic(_) => None,
        }
    }
}

/// The params of `skills/list`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListSkillsParams {
    /// Where the previous page ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// The result of `skills/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSkillsResult {
    /// One page of entries.
    pub skills: Vec<Skill>,
    /// The cursor of the next page, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// How long the listing stays fresh, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

/// The params of `skills/get`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GetSkillParams {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
}

/// The result of `skills/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetSkillResult {
    /// The skill's entry.
    pub skill: Skill,
    /// How long the entry stays current, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

/// The params of `resources/directory/read`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadDirectoryParams {
    /// The directory's URI (no trailing slash).
    pub uri: String,
    /// Where the previous page ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// The result of `resources/directory/read`: the directory's direct children.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadDirectoryResult {
    /// Files with their resource metadata, subdirectories as [`DIRECTORY_MIME_TYPE`].
    pub resources: Vec<Resource>,
    /// The cursor of the next page, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// How long the listing stays fresh, in milliseconds (the TypeScript SDK 2.x requires it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

/// `skills/list`.
pub enum ListSkills {}

impl CustomRequest for ListSkills {
    const METHOD: &'static str = "skills/list";
    type Params = ListSkillsParams;
    type Result = ListSkillsResult;
}

/// `skills/get`.
pub enum GetSkill {}

impl CustomRequest for GetSkill {
    const METHOD: &'static str = "skills/get";
    type Params = GetSkillParams;
    type Result = GetSkillResult;
}

/// `resources/directory/read`.
pub enum ReadDirectory {}

impl CustomRequest for ReadDirectory {
    const METHOD: &'static str = "resources/directory/read";
    type Params = ReadDirectoryParams;
    type Result = ReadDirectoryResult;
}

/// The digest of `bytes` as a skill entry writes it: `sha256:` and 64 lowercase hex digits.
///
/// ```
/// assert_eq!(
///     mcp_types::skills::digest(b""),
///     "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/// );
/// ```
pub fn digest(bytes: &[u8]) -> String {
    let hash = sha2::Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in hash {
        out.push(char::from_digit(u32::from(b >> 4), 16).unwrap_or('0'));
        out.push(char::from_digit(u32::from(b & 0xf), 16).unwrap_or('0'));
    }
    out
}

/// Why a `SKILL.md` has no usable frontmatter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FrontmatterError(String);

/// The frontmatter of a `SKILL.md` (the YAML between the leading `---` lines) as a JSON
/// object: mappings become objects, scalars JSON strings, numbers, booleans or null. A BOM
/// before it is skipped. `name` and `description` must be non-empty strings.
///
/// ```
/// let text = "---\nname: pdf\ndescription: Work with PDFs\nmetadata:\n  version: 2\n---\n# PDF\n";
/// let front = mcp_types::skills::frontmatter(text).unwrap();
/// assert_eq!(serde_json::Value::Object(front), serde_json::json!({
///     "name": "pdf", "description": "Work with PDFs", "metadata": {"version": 2}
/// }));
/// ```
pub fn frontmatter(text: &str) -> Result<JsonObject, FrontmatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let err = |m: &str| FrontmatterError(m.to_owned());
    let rest = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n"));
    let rest = rest.ok_or_else(|| err("SKILL.md does not begin with a `---` line"))?;
    // The closing `---` line: at the start of `rest` (empty frontmatter) or after a newline.
    let mut end = None;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end_matches(['\n', '\r']).trim_end_matches([' ', '\t']) == "---" {
            end = Some(offset);
            break;
        }
        offset += line.len();
    }
    let yaml = &rest[..end.ok_or_else(|| err("SKILL.md frontmatter has no closing `---` line"))?];
    let docs = yaml_rust2::YamlLoader::load_from_str(yaml).map_err(|e| FrontmatterError(format!("YAML: {e}")))?;
    let value = match docs.into_iter().next() {
        Some(doc) => yaml_to_json(doc)?,
        None => serde_json::Value::Object(JsonObject::new()),
    };
    let serde_json::Value::Object(object) = value else {
        return Err(err("SKILL.md frontmatter is not a mapping"));
    };
    for field in ["name", "description"] {
        if object.get(field).and_then(|v| v.as_str()).is_none_or(|s| s.is_empty()) {
            return Err(FrontmatterError(format!("SKILL.md frontmatter has no non-empty `{field}`")));
        }
    }
    Ok(object)
}

/// A YAML value as JSON.
fn yaml_to_json(yaml: yaml_rust2::Yaml) -> Result<serde_json::Value, FrontmatterError> {
    use serde_json::Value;
    use yaml_rust2::Yaml;
    Ok(match yaml {
        Yaml::Null => Value::Null,
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Integer(i) => Value::from(i),
        Yaml::Real(r) => match r.parse::<f64>().ok().and_then(serde_json::Number::from_f64) {
            Some(n) => Value::Number(n),
            None => Value::String(r),
        },
        Yaml::String(s) => Value::String(s),
        Yaml::Array(items) => Value::Array(items.into_iter().map(yaml_to_json).collect::<Result<_, _>>()?),
        Yaml::Hash(map) => {
            let mut object = JsonObject::new();
            for (k, v) in map {
                let key = match k {
                    Yaml::String(s) => s,
                    Yaml::Integer(i) => i.to_string(),
                    Yaml::Boolean(b) => b.to_string(),
                    Yaml::Real(r) => r,
                    _ => return Err(FrontmatterError("SKILL.md frontmatter has a key that is not a scalar".into())),
                };
                object.insert(key, yaml_to_json(v)?);
            }
            Value::Object(object)
        }
        Yaml::Alias(_) | Yaml::BadValue => {
            return Err(FrontmatterError("SKILL.md frontmatter has an alias or a value YAML cannot read".into()));
        }
    })
}

/// Whether `name` follows the Agent Skills naming rules: 1 to 64 lowercase letters, digits and
/// hyphens, no hyphen first, last or twice in a row.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}
