//! The Skills extension (SEP-2640, `io.modelcontextprotocol/skills`): a folder of Agent
//! Skills (each a directory with a `SKILL.md` and its files) served as `skill://` resources,
//! with `skills/list`, `skills/get` and `resources/directory/read`.
//!
//! [`Skills`] reads the files once, into memory, from a directory
//! ([`ServerBuilder::skills_dir`](crate::ServerBuilder::skills_dir)) or from files compiled
//! into the binary ([`Skills::from_files`], [`Skills::from_include_dir`] with the feature
//! `include_dir`); the builder serves them ([`ServerBuilder::skills`](crate::ServerBuilder::skills)).
//! A skill whose `SKILL.md` is generated when read is added with [`Skills::dynamic`]: its
//! entry says `"resources": "dynamic"`; [`Skills::dynamic_files`] gives it generated
//! supporting files, read and listed (by directory) when asked for.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use mcp_types::skills::{
    DIRECTORY_MIME_TYPE, GetSkill, GetSkillResult, ListSkills, ListSkillsResult, MAX_FILES, MAX_TOTAL_SIZE,
    ReadDirectory, ReadDirectoryResult, SCHEME, SKILL_MD, Skill, SkillResource, SkillResources,
};
use mcp_types::{AnyResourceContents, BlobResourceContents, ErrorObject, JsonObject, Resource, TextResourceContents};

use crate::context::Context;
use crate::context::visibility::{Item, ItemKind, Viewer, server_shows};
use crate::def::cache::CacheHints;
use crate::def::custom::CustomMethods;
use crate::def::resource::ResourceDef;

/// How deep [`Skills::from_dir`] descends below the folder.
const MAX_DEPTH: usize = 16;

/// Why skills could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillsError {
    /// A file or directory could not be read.
    #[error("reading {path}: {source}")]
    Io {
        /// Where.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A skill breaks a rule of the extension or of the Agent Skills format.
    #[error("skill `{path}`: {reason}")]
    Invalid {
        /// The file or skill path (relative to the folder).
        path: String,
        /// What is wrong.
        reason: String,
    },
}

/// One file: its bytes and media type.
#[derive(Clone)]
struct File {
    bytes: Arc<[u8]>,
    mime: &'static str,
}

/// What generates a dynamic skill's `SKILL.md` on each read.
type Generate = Arc<dyn Fn(Context) -> mcp_jsonrpc::BoxFuture<Result<String, ErrorObject>> + Send + Sync>;

/// What lists a dynamic skill's generated files: their paths relative to its directory.
type ListFiles = Arc<dyn Fn(Context) -> mcp_jsonrpc::BoxFuture<Result<Vec<String>, ErrorObject>> + Send + Sync>;

/// What generates one of a dynamic skill's files, by its relative path (`None`: no such file).
type ReadFile =
    Arc<dyn Fn(Context, String) -> mcp_jsonrpc::BoxFuture<Result<Option<Vec<u8>>, ErrorObject>> + Send + Sync>;

/// A dynamic skill's generated supporting files ([`Skills::dynamic_files`]).
#[derive(Clone)]
struct Generated {
    list: ListFiles,
    read: ReadFile,
}

/// A set of skills held in memory, ready to serve: their entries (frontmatter, digests and
/// sizes computed once) and their files; and dynamic skills, whose `SKILL.md` (and supporting
/// files, if given) are generated. `Default` is the empty set.
#[derive(Clone, Default)]
pub struct Skills {
    /// Entries by `SKILL.md` URI.
    entries: BTreeMap<String, Skill>,
    /// Files by URI.
    files: BTreeMap<String, File>,
    /// The generators of the dynamic skills, by `SKILL.md` URI.
    dynamic: BTreeMap<String, Generate>,
    /// The generated supporting files of dynamic skills, by `SKILL.md` URI.
    generated: BTreeMap<String, Generated>,
}

impl std::fmt::Debug for Skills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Skills")
            .field("skills", &self.entries.keys())
            .field("dynamic", &self.dynamic.keys())
            .finish_non_exhaustive()
    }
}

impl Skills {
    /// The skills of a folder: every directory below it that holds a `SKILL.md` is a skill,
    /// its path from the folder its skill path (`skill://<path>/SKILL.md`). Every file is read
    /// now; symbolic links are not followed.
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<Skills, SkillsError> {
        let mut files = Vec::new();
        walk(dir.as_ref(), "", 0, &mut files)?;
        Skills::from_files(files)
    }

    /// Skills from files given by their path (`/`-separated, relative to the skills' folder:
    /// `pdf-processing/SKILL.md`) and content.
    ///
    /// ```
    /// let skills = mcp_server::skills::Skills::from_files([
    ///     ("greeting/SKILL.md", &b"---\nname: greeting\ndescription: Greet people\n---\nSay hello.\n"[..]),
    ///     ("greeting/references/TONE.md", &b"Warm."[..]),
    /// ]).unwrap();
    /// assert_eq!(skills.entries()[0].uri, "skill://greeting/SKILL.md");
    /// ```
    pub fn from_files<P, B>(files: impl IntoIterator<Item = (P, B)>) -> Result<Skills, SkillsError>
    where
        P: AsRef<str>,
        B: Into<Arc<[u8]>>,
    {
        let mut by_path = BTreeMap::new();
        for (path, bytes) in files {
            let path = path.as_ref();
            let clean = path.split('/').all(|s| !s.is_empty() && s != "." && s != "..");
            if !clean {
                return Err(invalid(path, "a file path needs `/`-separated names, none empty, `.` or `..`"));
            }
            by_path.insert(path.to_owned(), bytes.into());
        }
        let mut entries = BTreeMap::new();
        for skill_md in by_path.keys().filter(|p| p.rsplit('/').next() == Some(SKILL_MD)) {
            let Some(dir) = skill_md.strip_suffix(&format!("/{SKILL_MD}")) else {
                return Err(invalid(skill_md, "a SKILL.md needs a directory of its own, named as the skill"));
            };
            let text = std::str::from_utf8(&by_path[skill_md]).map_err(|_| invalid(skill_md, "not UTF-8"))?;
            let frontmatter = mcp_types::skills::frontmatter(text).map_err(|e| invalid(skill_md, e))?;
            let name = frontmatter.get("name").and_then(|n| n.as_str()).unwrap_or_default();
            if dir.rsplit('/').next() != Some(name) {
                return Err(invalid(dir, format!("the directory's name is not the skill's name `{name}`")));
            }
            if !mcp_types::skills::valid_name(name) {
                return Err(invalid(
                    dir,
                    format!("`{name}` breaks the naming rules (lowercase letters, digits, hyphens)"),
                ));
            }
            let uri = format!("{SCHEME}{skill_md}");
            let prefix = format!("{dir}/");
            // `SKILL.md` first, then the others (nested skills' files too) by path.
            let mut resources = vec![resource(&uri, &by_path[skill_md])];
            resources.extend(
                by_path
                    .iter()
                    .filter(|(p, _)| p.starts_with(&prefix) && *p != skill_md)
                    .map(|(p, bytes)| resource(&format!("{SCHEME}{p}"), bytes)),
            );
            let total: u64 = resources.iter().map(|r| r.size).sum();
            if resources.len() > MAX_FILES || total > MAX_TOTAL_SIZE {
                return Err(invalid(
                    dir,
                    format!(
                        "{} files of {total} bytes: over the limits ({MAX_FILES} files, {MAX_TOTAL_SIZE} bytes)",
                        resources.len()
                    ),
                ));
            }
            entries.insert(uri.clone(), Skill { uri, frontmatter, resources: SkillResources::Files(resources) });
        }
        // Files outside every skill are not served.
        let files = by_path
            .into_iter()
            .filter(|(p, _)| entries.values().any(|s| p.starts_with(skill_dir(&s.uri))))
            .map(|(p, bytes)| {
                let mime = mime_type(&p, &bytes);
                (format!("{SCHEME}{p}"), File { bytes, mime })
            })
            .collect();
        Ok(Skills { entries, files, dynamic: BTreeMap::new(), generated: BTreeMap::new() })
    }

    /// Adds a dynamic skill at `path` (`reports/daily`: `skill://reports/daily/SKILL.md`) whose
    /// `SKILL.md` `generate` writes on each `resources/read`. Its entry carries `frontmatter`
    /// and `"resources": "dynamic"` (no digests to publish); `name` must be the last segment of
    /// `path` and follow the naming rules, and `description` must be a non-empty string. A
    /// generated `SKILL.md` whose frontmatter is not `frontmatter` is not served (the read
    /// fails). It follows visibility as a static skill's `SKILL.md` does.
    ///
    /// ```
    /// use mcp_server::skills::Skills;
    /// let front = serde_json::json!({"name": "daily", "description": "Today's report"});
    /// let skills = Skills::default()
    ///     .dynamic("reports/daily", front.as_object().unwrap().clone(), |_ctx| async {
    ///         Ok(format!("---\nname: daily\ndescription: Today's report\n---\nOpen tickets: {}\n", 3))
    ///     })
    ///     .unwrap();
    /// assert_eq!(skills.entries()[0].uri, "skill://reports/daily/SKILL.md");
    /// ```
    pub fn dynamic<F, Fut>(mut self, path: &str, frontmatter: JsonObject, generate: F) -> Result<Skills, SkillsError>
    where
        F: Fn(Context) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<String, ErrorObject>> + Send + 'static,
    {
        let clean = path.split('/').all(|s| !s.is_empty() && s != "." && s != "..");
        if !clean {
            return Err(invalid(path, "a skill path needs `/`-separated names, none empty, `.` or `..`"));
        }
        let name = frontmatter.get("name").and_then(|n| n.as_str()).unwrap_or_default();
        if path.rsplit('/').next() != Some(name) {
            return Err(invalid(path, format!("the path's last segment is not the skill's name `{name}`")));
        }
        if !mcp_types::skills::valid_name(name) {
            return Err(invalid(
                path,
                format!("`{name}` breaks the naming rules (lowercase letters, digits, hyphens)"),
            ));
        }
        if frontmatter.get("description").and_then(|d| d.as_str()).is_none_or(str::is_empty) {
            return Err(invalid(path, "the frontmatter needs a non-empty `description`"));
        }
        let uri = format!("{SCHEME}{path}/{SKILL_MD}");
        if self.entries.contains_key(&uri) || self.files.contains_key(&uri) {
            return Err(invalid(path, "a skill is already served there"));
        }
        let generate: Generate = Arc::new(move |ctx| Box::pin(generate(ctx)));
        self.dynamic.insert(uri.clone(), generate);
        let resources = SkillResources::Dynamic(mcp_types::skills::Dynamic::Dynamic);
        self.entries.insert(uri.clone(), Skill { uri, frontmatter, resources });
        Ok(self)
    }

    /// Gives the dynamic skill at `path` (added with [`dynamic`](Self::dynamic)) generated
    /// supporting files, each a resource `skill://<path>/<file path>`:
    ///
    /// - `list(ctx)` gives the paths (relative to the skill's directory, `/`-separated:
    ///   `references/TODAY.md`) of the files present now; `resources/directory/read` asks it
    ///   for the skill's directory and those below, and lists each file with the media type
    ///   its extension gives (none if the extension says nothing) and no size. A path with an
    ///   empty, `.` or `..` segment, or `SKILL.md` itself, is left out.
    /// - `read(ctx, path)` generates the file at `path` on each `resources/read` (text if
    ///   UTF-8, else base64; its media type as a static file's: by extension), or `None` for
    ///   a path it does not know: answered as a resource that does not exist. It is asked
    ///   only with clean paths (none with an empty, `.` or `..` segment, percent-encoded or
    ///   not, or a `\`): any other is unknown without asking.
    ///
    /// The files follow the skill's visibility (a hidden skill's files are unknown), and the
    /// predicate is asked with each file's resource too, as for a static skill's files.
    /// They are not in `resources/list` (which lists what is fixed when the server is built):
    /// a client finds them by reading the skill's directory, or by the paths its `SKILL.md`
    /// names.
    ///
    /// ```
    /// use mcp_server::skills::Skills;
    /// let front = serde_json::json!({"name": "daily", "description": "Today's report"});
    /// let skills = Skills::default()
    ///     .dynamic("reports/daily", front.as_object().unwrap().clone(), |_ctx| async {
    ///         Ok("---\nname: daily\ndescription: Today's report\n---\nSee references/TODAY.md.\n".to_owned())
    ///     })
    ///     .unwrap()
    ///     .dynamic_files(
    ///         "reports/daily",
    ///         |_ctx| async { Ok(vec!["references/TODAY.md".to_owned()]) },
    ///         |_ctx, path| async move {
    ///             Ok((path == "references/TODAY.md").then(|| b"Open tickets: 3\n".to_vec()))
    ///         },
    ///     )
    ///     .unwrap();
    /// # let _ = skills;
    /// ```
    pub fn dynamic_files<L, LFut, R, RFut>(mut self, path: &str, list: L, read: R) -> Result<Skills, SkillsError>
    where
        L: Fn(Context) -> LFut + Send + Sync + 'static,
        LFut: std::future::Future<Output = Result<Vec<String>, ErrorObject>> + Send + 'static,
        R: Fn(Context, String) -> RFut + Send + Sync + 'static,
        RFut: std::future::Future<Output = Result<Option<Vec<u8>>, ErrorObject>> + Send + 'static,
    {
        let uri = format!("{SCHEME}{path}/{SKILL_MD}");
        if !self.dynamic.contains_key(&uri) {
            return Err(invalid(path, "no dynamic skill is there (add it with `Skills::dynamic` first)"));
        }
        if self.generated.contains_key(&uri) {
            return Err(invalid(path, "the dynamic skill already has generated files"));
        }
        let list: ListFiles = Arc::new(move |ctx| Box::pin(list(ctx)));
        let read: ReadFile = Arc::new(move |ctx, path| Box::pin(read(ctx, path)));
        self.generated.insert(uri, Generated { list, read });
        Ok(self)
    }

    /// The generated files of the dynamic skills, as the server finds them.
    pub(crate) fn generated_files(&self) -> GeneratedFiles {
        let skills = self
            .generated
            .iter()
            .map(|(md, g)| {
                let dir = format!("{SCHEME}{}", skill_dir(md));
                GeneratedSkill { dir, md: md.clone(), generated: g.clone() }
            })
            .collect();
        GeneratedFiles { skills }
    }

    /// Skills compiled into the binary with `include_dir::include_dir!` (a folder of skills,
    /// as [`from_dir`](Self::from_dir) reads one).
    #[cfg(feature = "include_dir")]
    pub fn from_include_dir(dir: &include_dir::Dir<'static>) -> Result<Skills, SkillsError> {
        fn collect(dir: &include_dir::Dir<'static>, out: &mut Vec<(String, &'static [u8])>) {
            for file in dir.files() {
                out.push((file.path().to_string_lossy().replace('\\', "/"), file.contents()));
            }
            for sub in dir.dirs() {
                collect(sub, out);
            }
        }
        let mut files = Vec::new();
        collect(dir, &mut files);
        Skills::from_files(files)
    }

    /// The skills' entries, by `SKILL.md` URI.
    pub fn entries(&self) -> Vec<&Skill> {
        self.entries.values().collect()
    }

    /// The files as resources: `SKILL.md` named and described from its frontmatter
    /// (`text/markdown`), the others by their path in the skill.
    /// A dynamic skill's `SKILL.md` is generated on each read, and checked against its entry.
    pub(crate) fn resource_defs(&self) -> Vec<ResourceDef> {
        let files = self.files.iter().map(|(uri, file)| {
            let file = file.clone();
            ResourceDef::from_resource(self.file_resource(uri, &file), move |uri: String, _vars, _ctx: Context| {
                let file = file.clone();
                async move { Ok::<_, ErrorObject>(vec![contents(uri, &file)]) }
            })
        });
        let dynamic = self.dynamic.iter().map(|(uri, generate)| {
            let generate = generate.clone();
            let expected = self.entries[uri].frontmatter.clone();
            ResourceDef::from_resource(self.dynamic_resource(uri), move |uri: String, _vars, ctx: Context| {
                let (generated, expected) = (generate(ctx), expected.clone());
                async move {
                    let text = generated.await?;
                    if mcp_types::skills::frontmatter(&text).ok().as_ref() != Some(&expected) {
                        tracing::warn!(%uri, "a generated SKILL.md's frontmatter is not its entry's: not served");
                        return Err(ErrorObject::internal_error(format!(
                            "{uri}: the generated frontmatter is not the skill's"
                        )));
                    }
                    let mut c = TextResourceContents::new(uri, text);
                    c.mime_type = Some("text/markdown".to_owned());
                    Ok(vec![c.into()])
                }
            })
        });
        files.chain(dynamic).collect()
    }

    /// The resource of a dynamic skill's `SKILL.md`, as listed (no size: it is generated).
    fn dynamic_resource(&self, uri: &str) -> Resource {
        let skill = &self.entries[uri];
        let mut r = Resource::new(skill.name().unwrap_or_default(), uri.to_owned());
        r.description = skill.description().map(str::to_owned);
        r.mime_type = Some("text/markdown".to_owned());
        r
    }

    /// The resource of the file at `uri`, as listed.
    fn file_resource(&self, uri: &str, file: &File) -> Resource {
        let mut resource = match self.entries.get(uri) {
            Some(skill) => {
                let mut r = Resource::new(skill.name().unwrap_or_default(), uri.to_owned());
                r.description = skill.description().map(str::to_owned);
                r
            }
            None => Resource::new(uri.rsplit('/').next().unwrap_or_default(), uri.to_owned()),
        };
        resource.mime_type = Some(file.mime.to_owned());
        resource.size = i64::try_from(file.bytes.len()).ok();
        resource
    }

    /// The URI of each file to the URI of its skill's `SKILL.md` (the skill whose directory
    /// holds it, the deepest if skills nest): whose visibility the file follows.
    pub(crate) fn skill_files(&self) -> hashbrown::HashMap<String, String> {
        self.files
            .keys()
            .filter_map(|uri| {
                let path = &uri[SCHEME.len()..];
                let skill =
                    self.entries.keys().filter(|md| path.starts_with(skill_dir(md))).max_by_key(|md| md.len())?;
                Some((uri.clone(), skill.clone()))
            })
            .chain(self.dynamic.keys().map(|uri| (uri.clone(), uri.clone())))
            .collect()
    }

    /// Registers `skills/list`, `skills/get` and `resources/directory/read`, which show a
    /// request only what `sight` lets it see.
    pub(crate) fn register(
        self,
        custom: &mut CustomMethods,
        page_size: usize,
        list_hints: CacheHints,
        get_hints: CacheHints,
        sight: Sight,
    ) {
        let dirs = Arc::new(self.directories());
        let generated_files = self.generated_files();
        let files = self.files.iter().map(|(uri, file)| (uri.clone(), self.file_resource(uri, file)));
        let generated = self.dynamic.keys().map(|uri| (uri.clone(), self.dynamic_resource(uri)));
        let resources = files.chain(generated).collect();
        let sight = Arc::new(SkillSight { sight, resources });
        let entries: Arc<Vec<Skill>> = Arc::new(self.entries.into_values().collect());
        let ttl = |h: &CacheHints| u64::try_from(h.ttl_ms).unwrap_or(0);
        let list = entries.clone();
        let dir_hints = list_hints.clone();
        let (list_sight, get_sight) = (sight.clone(), sight.clone());
        custom.add_request(
            "skills/list".to_owned(),
            mcp_jsonrpc::custom::typed_request::<ListSkills, Context, _, _>(move |params, ctx| {
                // What the request sees, filtered before paging (as the protocol's lists are).
                let seen: Vec<Skill>;
                let skills: &[Skill] = match list_sight.filters(&ctx) {
                    false => &list,
                    true => {
                        seen = list
                            .iter()
                            .filter(|s| list_sight.shows(&ctx, &s.uri))
                            .map(|s| list_sight.entry(&ctx, s))
                            .collect();
                        &seen
                    }
                };
                let page = page(skills, params.cursor.as_deref(), page_size).map(|(skills, next)| ListSkillsResult {
                    skills: skills.to_vec(),
                    next_cursor: next,
                    ttl_ms: Some(ttl(&list_hints)),
                    cache_scope: Some(list_hints.scope.clone()),
                });
                std::future::ready(page)
            }),
        );
        custom.add_request(
            "skills/get".to_owned(),
            mcp_jsonrpc::custom::typed_request::<GetSkill, Context, _, _>(move |params, ctx| {
                let filters = get_sight.filters(&ctx);
                let seen = |s: &&Skill| !filters || get_sight.shows(&ctx, &s.uri);
                let found = match entries.iter().find(|s| s.uri == params.uri).filter(seen) {
                    Some(skill) => Ok(GetSkillResult {
                        skill: if filters { get_sight.entry(&ctx, skill) } else { skill.clone() },
                        ttl_ms: Some(ttl(&get_hints)),
                        cache_scope: Some(get_hints.scope.clone()),
                    }),
                    None => Err(ErrorObject::invalid_params(format!("no skill is served at {}", params.uri))),
                };
                std::future::ready(found)
            }),
        );
        let generated = Arc::new(generated_files);
        custom.add_request(
            "resources/directory/read".to_owned(),
            mcp_jsonrpc::custom::typed_request::<ReadDirectory, Context, _, _>(move |params, ctx| {
                // A directory is known to a request that sees a file below it; its children
                // are the files it sees and the directories known to it.
                let filters = sight.filters(&ctx);
                let dir = params.uri;
                let fixed = dirs.get(&dir).filter(|_| !filters || sight.knows_dir(&ctx, &dir));
                let known = fixed.is_some();
                // The generated files of the dynamic skills whose directory is this one or
                // holds it, and which the request sees: listed now.
                let below = format!("{dir}/");
                let lists: Vec<_> = generated
                    .skills
                    .iter()
                    .filter(|s| below.starts_with(&s.dir) && (!filters || sight.shows(&ctx, &s.md)))
                    .map(|s| (s.md.clone(), s.dir.clone(), (s.generated.list)(ctx.clone())))
                    .collect();
                // None: the directory's children are those fixed when the server was built.
                let fixed_only = lists.is_empty().then(|| {
                    let seen: Vec<Resource>;
                    let children = match fixed {
                        Some(children) if filters => {
                            seen = children.iter().filter(|c| sight.knows(&ctx, c)).cloned().collect();
                            Some(&seen[..])
                        }
                        other => other.map(Vec::as_slice),
                    };
                    match children {
                        Some(children) => directory_page(children, params.cursor.as_deref(), page_size, &dir_hints),
                        None => Err(not_a_directory(&dir)),
                    }
                });
                let mut children: BTreeMap<String, Resource> = match fixed_only {
                    Some(_) => BTreeMap::new(),
                    None => fixed
                        .into_iter()
                        .flatten()
                        .filter(|c| !filters || sight.knows(&ctx, c))
                        .map(|c| (c.uri.clone(), c.clone()))
                        .collect(),
                };
                let (sight, generated, hints, cursor) =
                    (sight.clone(), generated.clone(), dir_hints.clone(), params.cursor);
                async move {
                    if let Some(answer) = fixed_only {
                        return answer;
                    }
                    for (md, skill_dir, list) in lists {
                        for path in list.await? {
                            let uri = format!("{skill_dir}{path}");
                            // A path that is not clean, or a file of a deeper dynamic skill, is left out.
                            let Some(file) = generated.find(&uri).filter(|f| f.skill_md == md) else { continue };
                            let Some(rest) = uri.strip_prefix(&below) else { continue };
                            if filters && !sight.shows_resource(&ctx, &file.resource) {
                                continue;
                            }
                            let child = match rest.split_once('/') {
                                None => file.resource,
                                Some((name, _)) => {
                                    let mut r = Resource::new(name, format!("{below}{name}"));
                                    r.mime_type = Some(DIRECTORY_MIME_TYPE.to_owned());
                                    r
                                }
                            };
                            children.entry(child.uri.clone()).or_insert(child);
                        }
                    }
                    if !known && children.is_empty() {
                        return Err(not_a_directory(&dir));
                    }
                    let children: Vec<Resource> = children.into_values().collect();
                    directory_page(&children, cursor.as_deref(), page_size, &hints)
                }
            }),
        );
    }

    /// Every directory of the skill namespace (each prefix of a file's URI below the scheme)
    /// with its direct children: files with their metadata, subdirectories as directories.
    fn directories(&self) -> BTreeMap<String, Vec<Resource>> {
        let mut dirs: BTreeMap<String, BTreeMap<String, Resource>> = BTreeMap::new();
        // A dynamic skill's `SKILL.md` (of no known size) with the files.
        let fixed = self.files.iter().map(|(uri, file)| (uri, Some(file)));
        for (uri, file) in fixed.chain(self.dynamic.keys().map(|uri| (uri, None))) {
            let path = &uri[SCHEME.len()..];
            let segments: Vec<&str> = path.split('/').collect();
            for depth in 1..segments.len() {
                let dir = format!("{SCHEME}{}", segments[..depth].join("/"));
                let name = segments[depth];
                let child_uri = format!("{dir}/{name}");
                let child = if depth + 1 == segments.len() {
                    let mut r = Resource::new(name, child_uri.clone());
                    r.mime_type = Some(file.map_or("text/markdown", |f| f.mime).to_owned());
                    r.size = file.and_then(|f| i64::try_from(f.bytes.len()).ok());
                    r
                } else {
                    let mut r = Resource::new(name, child_uri.clone());
                    r.mime_type = Some(DIRECTORY_MIME_TYPE.to_owned());
                    r
                };
                dirs.entry(dir).or_default().insert(child_uri, child);
            }
        }
        dirs.into_iter().map(|(dir, children)| (dir, children.into_values().collect())).collect()
    }
}

/// What decides which items a request sees: the server's predicate and `hide_out_of_scope`
/// ([`ServerBuilder::visibility`](crate::ServerBuilder::visibility)), and which skill each file
/// belongs to.
pub(crate) struct Sight {
    pub(crate) visibility: Option<crate::context::visibility::VisibilityFn>,
    pub(crate) hide_out_of_scope: bool,
    pub(crate) skill_files: Arc<hashbrown::HashMap<String, String>>,
}

/// Which skills and files a request sees: a file (and a skill, named by its `SKILL.md`) is seen
/// when its resource and its skill's `SKILL.md` resource are, as `resources/read` sees them.
struct SkillSight {
    sight: Sight,
    /// Each file's resource, as listed (what the predicate is asked with).
    resources: hashbrown::HashMap<String, Resource>,
}

impl SkillSight {
    /// Whether some item may be hidden from the request of `ctx` (else nothing is filtered).
    fn filters(&self, ctx: &Context) -> bool {
        self.sight.visibility.is_some() || self.sight.hide_out_of_scope || ctx.session.hides_any()
    }

    /// Whether the request of `ctx` sees the file at `uri`.
    fn shows(&self, ctx: &Context, uri: &str) -> bool {
        let one = |uri: &str| self.resources.get(uri).is_none_or(|r| self.shows_resource(ctx, r));
        one(uri) && self.sight.skill_files.get(uri).is_none_or(|md| md == uri || one(md))
    }

    /// Whether the request of `ctx` sees `resource` itself (its skill aside): the session does
    /// not hide it and the predicate shows it.
    fn shows_resource(&self, ctx: &Context, resource: &Resource) -> bool {
        let who = Viewer { session: &ctx.session, attachment: ctx.attachment.as_ref(), version: ctx.version };
        let (s, item) = (&self.sight, Item::Resource(resource, &[]));
        !ctx.session.hides(ItemKind::Resource, &resource.uri)
            && server_shows(s.visibility.as_ref(), s.hide_out_of_scope, item, &who)
    }

    /// `skill`'s entry as the request of `ctx` sees it: its files that the request does not see
    /// (those of a nested skill hidden from it) are not listed.
    fn entry(&self, ctx: &Context, skill: &Skill) -> Skill {
        let mut skill = skill.clone();
        if let SkillResources::Files(files) = &mut skill.resources {
            files.retain(|file| self.shows(ctx, &file.uri));
        }
        skill
    }

    /// Whether the directory `dir` is known to the request of `ctx`: it sees a file below it.
    fn knows_dir(&self, ctx: &Context, dir: &str) -> bool {
        self.resources
            .keys()
            .any(|uri| uri.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/')) && self.shows(ctx, uri))
    }

    /// Whether a directory's child (a file, or a directory) is known to the request of `ctx`.
    fn knows(&self, ctx: &Context, child: &Resource) -> bool {
        match child.mime_type.as_deref() == Some(DIRECTORY_MIME_TYPE) {
            true => self.knows_dir(ctx, &child.uri),
            false => self.shows(ctx, &child.uri),
        }
    }
}

/// The generated files of the dynamic skills served ([`Skills::dynamic_files`]): what
/// `resources/read` falls back to for a URI that no resource or template serves.
#[derive(Clone, Default)]
pub(crate) struct GeneratedFiles {
    skills: Vec<GeneratedSkill>,
}

/// One dynamic skill's generated files.
#[derive(Clone)]
struct GeneratedSkill {
    /// Its directory, with its trailing slash: `skill://reports/daily/`.
    dir: String,
    /// Its `SKILL.md` URI, whose visibility its files follow.
    md: String,
    generated: Generated,
}

/// A generated file found by its URI, not yet read.
pub(crate) struct GeneratedFile {
    /// Its resource, as the visibility predicate is asked with it.
    pub(crate) resource: Resource,
    /// The `SKILL.md` URI of its skill.
    pub(crate) skill_md: String,
    /// Its path in the skill's directory.
    path: String,
    read: ReadFile,
}

impl GeneratedFiles {
    /// The dynamic skill whose directory holds `uri` (the deepest if they nest), and the path
    /// of `uri` in it.
    fn owner<'a>(&'a self, uri: &'a str) -> Option<(&'a GeneratedSkill, &'a str)> {
        self.skills
            .iter()
            .filter_map(|s| uri.strip_prefix(s.dir.as_str()).map(|rest| (s, rest)))
            .max_by_key(|(s, _)| s.dir.len())
    }

    /// The generated file at `uri`: a clean path (see [`clean_path`]) below a dynamic skill's
    /// directory, other than its `SKILL.md`.
    pub(crate) fn find(&self, uri: &str) -> Option<GeneratedFile> {
        let (skill, path) = self.owner(uri)?;
        if !clean_path(path) || path == SKILL_MD {
            return None;
        }
        Some(GeneratedFile {
            resource: generated_resource(uri),
            skill_md: skill.md.clone(),
            path: path.to_owned(),
            read: skill.generated.read.clone(),
        })
    }
}

impl GeneratedFile {
    /// Generates the file: its contents, or "resource not found" if the skill does not know it.
    pub(crate) fn read(self, ctx: Context) -> mcp_jsonrpc::BoxFuture<Result<Vec<AnyResourceContents>, ErrorObject>> {
        let (generated, path, uri) = ((self.read)(ctx, self.path.clone()), self.path, self.resource.uri);
        Box::pin(async move {
            match generated.await? {
                Some(bytes) => {
                    let mime = mime_type(&path, &bytes);
                    Ok(vec![contents(uri, &File { bytes: bytes.into(), mime })])
                }
                None => Err(ErrorObject::resource_not_found(&uri)),
            }
        })
    }
}

/// A generated file's resource, as a directory lists it and the predicate is asked with it:
/// named by its last segment, of the media type its extension gives, no size.
fn generated_resource(uri: &str) -> Resource {
    let name = uri.rsplit('/').next().unwrap_or_default();
    let mut r = Resource::new(name, uri.to_owned());
    r.mime_type = known_mime(name).map(str::to_owned);
    r
}

/// Whether `path` is a relative path a generator is asked with: `/`-separated names, none
/// empty, `.` or `..` (percent-encoded or not), none with a backslash or a NUL.
fn clean_path(path: &str) -> bool {
    path.split('/').all(|segment| {
        let decoded = segment.to_ascii_lowercase().replace("%2e", ".");
        !segment.is_empty() && decoded != "." && decoded != ".." && !segment.contains(['\\', '\0'])
    })
}

/// One page of a directory's `children` from `cursor`, with the cache hints of listings.
fn directory_page(
    children: &[Resource],
    cursor: Option<&str>,
    page_size: usize,
    hints: &CacheHints,
) -> Result<ReadDirectoryResult, ErrorObject> {
    page(children, cursor, page_size).map(|(resources, next)| ReadDirectoryResult {
        resources: resources.to_vec(),
        next_cursor: next,
        ttl_ms: Some(u64::try_from(hints.ttl_ms).unwrap_or(0)),
        cache_scope: Some(hints.scope.clone()),
    })
}

/// The error of a directory read of what is no directory (or one hidden from the request).
fn not_a_directory(dir: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("{dir} is not a directory resource"))
}

/// One page of `items` from `cursor` (an offset the previous page gave), and the next cursor.
fn page<'a, T>(items: &'a [T], cursor: Option<&str>, size: usize) -> Result<(&'a [T], Option<String>), ErrorObject> {
    let start = match cursor {
        None => 0,
        Some(c) => c
            .parse::<usize>()
            .ok()
            .filter(|&s| s <= items.len())
            .ok_or_else(|| ErrorObject::invalid_params(format!("invalid cursor {c:?}")))?,
    };
    let end = start.saturating_add(size.max(1)).min(items.len());
    Ok((&items[start..end], (end < items.len()).then(|| end.to_string())))
}

/// The directory of a skill, with its trailing slash, from its `SKILL.md` URI.
fn skill_dir(uri: &str) -> &str {
    let path = &uri[SCHEME.len()..];
    &path[..path.len() - SKILL_MD.len()]
}

/// The entry of one file.
fn resource(uri: &str, bytes: &[u8]) -> SkillResource {
    SkillResource { uri: uri.to_owned(), digest: mcp_types::skills::digest(bytes), size: bytes.len() as u64 }
}

/// A file's contents as `resources/read` returns them: text if UTF-8, else base64.
fn contents(uri: String, file: &File) -> AnyResourceContents {
    match std::str::from_utf8(&file.bytes) {
        Ok(text) => {
            let mut c = TextResourceContents::new(uri, text);
            c.mime_type = Some(file.mime.to_owned());
            c.into()
        }
        Err(_) => {
            let mut c = BlobResourceContents::new(uri, base64::engine::general_purpose::STANDARD.encode(&file.bytes));
            c.mime_type = Some(file.mime.to_owned());
            c.into()
        }
    }
}

/// A file's media type, by its extension; text or bytes otherwise.
fn mime_type(path: &str, bytes: &[u8]) -> &'static str {
    match known_mime(path) {
        Some(mime) => mime,
        None if std::str::from_utf8(bytes).is_ok() => "text/plain",
        None => "application/octet-stream",
    }
}

/// The media type a file's extension gives, if it gives one.
fn known_mime(path: &str) -> Option<&'static str> {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    Some(match ext.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "py" => "text/x-python",
        "sh" => "text/x-shellscript",
        "js" => "text/javascript",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "html" | "htm" => "text/html",
        "csv" => "text/csv",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        _ => return None,
    })
}

/// Reads the files below `dir` (its path from the folder: `rel`), skipping symbolic links.
fn walk(dir: &Path, rel: &str, depth: usize, out: &mut Vec<(String, Vec<u8>)>) -> Result<(), SkillsError> {
    if depth > MAX_DEPTH {
        return Err(invalid(rel, format!("deeper than {MAX_DEPTH} directories")));
    }
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| SkillsError::Io { path, source }
    };
    let mut names: Vec<_> = std::fs::read_dir(dir).map_err(io(dir))?.collect::<Result<_, _>>().map_err(io(dir))?;
    names.sort_by_key(|e| e.file_name());
    for entry in names {
        let path = entry.path();
        let kind = entry.file_type().map_err(io(&path))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            return Err(invalid(rel, format!("a file name that is not UTF-8: {}", path.display())));
        };
        let child = if rel.is_empty() { name } else { format!("{rel}/{name}") };
        if kind.is_dir() {
            walk(&path, &child, depth + 1, out)?;
        } else if kind.is_file() {
            out.push((child, std::fs::read(&path).map_err(io(&path))?));
        }
    }
    Ok(())
}

fn invalid(path: &str, reason: impl std::fmt::Display) -> SkillsError {
    SkillsError::Invalid { path: path.to_owned(), reason: reason.to_string() }
}

/// The extension's settings as the server declares them: `directoryRead`.
pub(crate) fn settings() -> JsonObject {
    let mut settings = JsonObject::new();
    settings.insert("directoryRead".to_owned(), true.into());
    settings
}
