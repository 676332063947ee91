//! The Skills extension (SEP-2640) between our client and our server over HTTP on a real
//! socket: a folder of skills served by `ServerBuilder::skills_dir`, listed (page by page),
//! got, loaded and read with every file checked against its entry; directories read; and a
//! server whose files do not match their entries (digest, size, frontmatter) refused, with no
//! file read before a skill is loaded.

#![cfg(feature = "http")]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use mcp_client::skills::SkillError;
use mcp_client::{ClientBuilder, ClientError};
use mcp_server::mcp_transport_http::server::{self, HttpServerConfig};
use mcp_server::{ResourceDef, Server};
use mcp_types::skills::{EXTENSION, SkillResources};
use mcp_types::{BlobResourceContents, ErrorObject, TextResourceContents};
use serde_json::{Value, json};
use sha2::Digest as _;

const GREETING: &str = "---\nname: greeting\ndescription: Greet people\nmetadata:\n  version: 2\n---\n\nSay hello.\n";
const CHANGELOG: &str = "---\nname: changelog\ndescription: Write changelog lines\n---\nOne line.\n";
const LOGO: &[u8] = &[0x89, b'P', b'N', b'G', 0xff, 0x00, 0x10];

/// A folder of skills under the system's temporary directory, removed when dropped.
struct Folder(PathBuf);

impl Folder {
    fn new(name: &str, files: &[(&str, &[u8])]) -> Folder {
        let dir = std::env::temp_dir().join(format!("mcp-skills-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (path, bytes) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        Folder(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn serve(server: Server) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server::serve_listener(Arc::new(server), HttpServerConfig::default(), listener));
    format!("http://{addr}/mcp")
}

fn sha256(bytes: &[u8]) -> String {
    let hex: String = sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

fn folder(name: &str) -> Folder {
    Folder::new(
        name,
        &[
            ("greeting/SKILL.md", GREETING.as_bytes()),
            ("greeting/references/TONE.md", b"Warm.\n"),
            ("greeting/assets/logo.png", LOGO),
            ("team/changelog/SKILL.md", CHANGELOG.as_bytes()),
            ("README.txt", b"not a skill's file"),
        ],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_of_skills_is_listed_got_loaded_and_read_over_http() {
    let folder = folder("served");
    // One skill a page: the client follows the cursors.
    // The listing's cache hints are those of resources/list; skills/get's those of resources/read.
    let list_hints = (mcp_server::CacheTarget::ResourcesList, std::time::Duration::from_secs(60));
    let server = Server::builder("skills", "1.0")
        .skills_dir(folder.path())
        .page_size(1)
        .cache_hints_for(list_hints.0, list_hints.1, mcp_types::CacheScope::Public)
        .build()
        .unwrap();
    let client = ClientBuilder::new("c", "1.0").connect_http(&serve(server).await).await.unwrap();
    assert!(client.protocol_version().is_stateless());
    assert_eq!(client.server_extension(EXTENSION).cloned(), json!({"directoryRead": true}).as_object().cloned());

    let skills = client.list_skills().await.unwrap();
    let uris: Vec<&str> = skills.iter().map(|s| s.uri.as_str()).collect();
    assert_eq!(uris, ["skill://greeting/SKILL.md", "skill://team/changelog/SKILL.md"]);
    let greeting = &skills[0];
    assert_eq!(
        Value::Object(greeting.frontmatter.clone()),
        json!({"name": "greeting", "description": "Greet people", "metadata": {"version": 2}})
    );
    let SkillResources::Files(files) = &greeting.resources else { panic!("{greeting:?}") };
    let listed: Vec<(&str, &str, u64)> = files.iter().map(|f| (f.uri.as_str(), f.digest.as_str(), f.size)).collect();
    let (skill_md, tone, logo) = (sha256(GREETING.as_bytes()), sha256(b"Warm.\n"), sha256(LOGO));
    assert_eq!(
        listed,
        [
            ("skill://greeting/SKILL.md", skill_md.as_str(), GREETING.len() as u64),
            ("skill://greeting/assets/logo.png", logo.as_str(), LOGO.len() as u64),
            ("skill://greeting/references/TONE.md", tone.as_str(), 6),
        ]
    );

    // The listing's cache hints, and `resultType`, as the 2026-07-28 wire carries them.
    let raw = client.request_raw("skills/list", Some(json!({}))).await.unwrap();
    assert_eq!((raw["ttlMs"].clone(), raw["cacheScope"].clone()), (json!(60000), json!("public")));
    assert_eq!(raw["resultType"], "complete");
    let got = client.request_raw("skills/get", Some(json!({"uri": "skill://greeting/SKILL.md"}))).await.unwrap();
    assert_eq!((got["ttlMs"].clone(), got["cacheScope"].clone()), (json!(0), json!("private")));

    assert_eq!(&client.get_skill("skill://greeting/SKILL.md").await.unwrap(), greeting);
    match client.get_skill("skill://nobody/SKILL.md").await {
        Err(SkillError::Client(ClientError::Remote(e))) => assert_eq!(e.code, -32602),
        other => panic!("{other:?}"),
    }

    let loaded = client.load_skill(greeting).await.unwrap();
    assert_eq!(loaded.instructions, GREETING);
    assert_eq!(client.read_skill_file(greeting, "skill://greeting/assets/logo.png").await.unwrap(), LOGO);
    assert_eq!(client.read_skill_file(greeting, "skill://greeting/references/TONE.md").await.unwrap(), b"Warm.\n");
    // A file of another skill, or none, is not the skill's.
    let unlisted = client.read_skill_file(greeting, "skill://team/changelog/SKILL.md").await;
    assert!(matches!(unlisted, Err(SkillError::Unlisted { .. })), "{unlisted:?}");

    // SKILL.md as a resource: named and described from its frontmatter.
    let resources = client.list_all_resources().await.unwrap();
    let md = resources.iter().find(|r| r.uri == "skill://greeting/SKILL.md").unwrap();
    assert_eq!((md.name.as_str(), md.description.as_deref()), ("greeting", Some("Greet people")));
    assert_eq!(md.mime_type.as_deref(), Some("text/markdown"));
    assert!(resources.iter().all(|r| !r.uri.contains("README")), "a file outside every skill is not served");

    // Directories: a skill's root lists its files and subdirectories (a page each, as the
    // page size says); a file is no directory.
    let (mut root, mut cursor) = (Vec::new(), None);
    loop {
        let page = client.read_directory("skill://greeting", cursor).await.unwrap();
        root.extend(page.resources);
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    let children: Vec<(&str, Option<&str>)> = root.iter().map(|r| (r.uri.as_str(), r.mime_type.as_deref())).collect();
    assert_eq!(
        children,
        [
            ("skill://greeting/SKILL.md", Some("text/markdown")),
            ("skill://greeting/assets", Some("inode/directory")),
            ("skill://greeting/references", Some("inode/directory")),
        ]
    );
    let team = client.read_directory("skill://team", None).await.unwrap();
    // Cache hints too, which the TypeScript SDK 2.x requires of a directory read.
    assert_eq!((team.ttl_ms, team.cache_scope.clone()), (Some(60000), Some(mcp_types::CacheScope::Public)));
    assert_eq!(team.resources.len(), 1);
    assert_eq!(team.resources[0].uri, "skill://team/changelog");
    match client.read_directory("skill://greeting/SKILL.md", None).await {
        Err(SkillError::Client(ClientError::Remote(e))) => assert_eq!(e.code, -32602),
        other => panic!("{other:?}"),
    }
}

/// A skill's entry as a server lists it, with `SKILL.md` described by `digest` and `size`.
fn entry(name: &str, description: &str, digest: String, size: usize) -> Value {
    let uri = format!("skill://{name}/SKILL.md");
    json!({
        "uri": uri,
        "frontmatter": {"name": name, "description": description},
        "resources": [{"uri": uri, "digest": digest, "size": size}]
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_whose_file_is_not_its_entrys_is_refused_and_nothing_is_read_before_loading() {
    let body = |name: &str, description: &str| format!("---\nname: {name}\ndescription: {description}\n---\nBody.\n");
    let served = |name: &str| match name {
        // Same length as the listed body, other bytes.
        "digest" => body("digest", "Fine").replace("Body.", "Evil."),
        "size" => body("size", "Fine") + "more bytes\n",
        "frontmatter" => body("frontmatter", "Exfiltrate"),
        _ => body(name, "Fine"),
    };
    let listed = |name: &str| {
        let text = if name == "frontmatter" { served(name) } else { body(name, "Fine") };
        entry(name, "Fine", sha256(text.as_bytes()), text.len())
    };
    let skills = json!([listed("digest"), listed("size"), listed("frontmatter"), listed("good")]);
    let reads = Arc::new(AtomicUsize::new(0));
    let mut builder = Server::builder("tampered", "1.0")
        .extension(EXTENSION, serde_json::Map::new())
        .raw_request_handler("skills/list", move |_params, _ctx| {
            let skills = skills.clone();
            async move { Ok::<_, ErrorObject>(json!({"skills": skills})) }
        });
    for name in ["digest", "size", "frontmatter", "good"] {
        let (reads, text) = (reads.clone(), served(name));
        builder = builder.resource(ResourceDef::new(name, format!("skill://{name}/SKILL.md"), move |uri, _, _| {
            reads.fetch_add(1, Ordering::SeqCst);
            let text = text.clone();
            async move { Ok::<_, ErrorObject>(vec![TextResourceContents::new(uri, text).into()]) }
        }));
    }
    let client = ClientBuilder::new("c", "1.0").connect_http(&serve(builder.build().unwrap()).await).await.unwrap();

    let skills = client.list_skills().await.unwrap();
    assert_eq!(skills.len(), 4);
    assert_eq!(reads.load(Ordering::SeqCst), 0, "listing reads no file");

    // Each refused for what differs: the size is checked before the digest.
    for (skill, why) in skills[..3].iter().zip(["digest", "bytes, the entry says", "frontmatter field `description`"]) {
        match client.load_skill(skill).await {
            Err(SkillError::Verification { uri, reason }) => {
                assert_eq!(uri, skill.uri);
                assert!(reason.contains(why), "{uri}: {reason}");
            }
            other => panic!("{}: {other:?}", skill.uri),
        }
    }
    let good = client.load_skill(&skills[3]).await.unwrap();
    assert_eq!(good.instructions, body("good", "Fine"));
    assert_eq!(reads.load(Ordering::SeqCst), 4, "one read a load");
}

const TODAY: &[u8] = b"Open tickets: 3\n";
const TODAY_URI: &str = "skill://reports/daily/references/TODAY.md";

fn skill_uri() -> String {
    "skill://reports/daily/SKILL.md".to_owned()
}

const DAILY_FRONT: &str = "name: daily\ndescription: Today's report\nmetadata:\n  io.modelcontextprotocol/not-yet-defined: kept\n  version: 1\n";

/// A dynamic skill of our server: `SKILL.md` generated on each read, listed and got as
/// `"resources": "dynamic"` with its frontmatter (a reserved `io.modelcontextprotocol/`
/// metadata key unknown to the client passed through); loaded only on the host's opt-in,
/// verified against its entry; its generated file listed by directory and read after loading
/// (counted in the load; a URI outside its directory refused unread); hidden as a static
/// skill is; a generated `SKILL.md` whose frontmatter is not the entry's not served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dynamic_skill_is_generated_on_each_read_and_loaded_only_on_opt_in() {
    let reads = Arc::new(AtomicUsize::new(0));
    let front = |name: &str, description: &str| json!({"name": name, "description": description});
    let mut daily = front("daily", "Today's report");
    daily["metadata"] = json!({"io.modelcontextprotocol/not-yet-defined": "kept", "version": 1});
    let counter = reads.clone();
    let skills = mcp_server::skills::Skills::from_files([("changelog/SKILL.md", CHANGELOG.as_bytes())])
        .unwrap()
        .dynamic("reports/daily", daily.as_object().unwrap().clone(), move |_ctx| {
            let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
            async move { Ok(format!("---\n{DAILY_FRONT}---\nRun {n}.\n")) }
        })
        .unwrap()
        .dynamic_files(
            "reports/daily",
            |_ctx| async { Ok(vec!["references/TODAY.md".to_owned()]) },
            |_ctx, path| async move { Ok((path == "references/TODAY.md").then(|| TODAY.to_vec())) },
        )
        .unwrap()
        .dynamic("secret", front("secret", "Hidden").as_object().unwrap().clone(), |_| async {
            Ok("---\nname: secret\ndescription: Hidden\n---\n".to_owned())
        })
        .unwrap()
        .dynamic("liar", front("liar", "Fine").as_object().unwrap().clone(), |_| async {
            Ok("---\nname: liar\ndescription: Exfiltrate\n---\n".to_owned())
        })
        .unwrap();
    let server = Server::builder("dynamic", "1.0")
        .skills(skills)
        .visibility(|item, _who| item.name() != "secret")
        .build()
        .unwrap();
    let client = ClientBuilder::new("c", "1.0").connect_http(&serve(server).await).await.unwrap();

    let raw = client.request_raw("skills/list", Some(json!({}))).await.unwrap();
    let listed: Vec<(&str, &Value)> =
        raw["skills"].as_array().unwrap().iter().map(|s| (s["uri"].as_str().unwrap(), &s["resources"])).collect();
    assert_eq!(listed[0].0, "skill://changelog/SKILL.md");
    assert_eq!(
        &listed[1..],
        [("skill://liar/SKILL.md", &json!("dynamic")), ("skill://reports/daily/SKILL.md", &json!("dynamic"))]
    );
    let got = client.request_raw("skills/get", Some(json!({"uri": "skill://reports/daily/SKILL.md"}))).await.unwrap();
    assert_eq!(got["skill"]["resources"], "dynamic");
    assert_eq!(got["skill"]["frontmatter"], daily);
    assert_eq!(reads.load(Ordering::SeqCst), 0, "listing and getting generate nothing");

    // Hidden: unknown to skills/get and resources/read, as a static skill would be.
    for (method, key) in [("skills/get", "uri"), ("resources/read", "uri")] {
        match client.request_raw(method, Some(json!({key: "skill://secret/SKILL.md"}))).await {
            Err(ClientError::Remote(_)) => {}
            other => panic!("{method}: {other:?}"),
        }
    }

    let skill = client.get_skill("skill://reports/daily/SKILL.md").await.unwrap();
    match client.load_skill(&skill).await {
        Err(SkillError::Entry { reason, .. }) => assert!(reason.contains("dynamic"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(reads.load(Ordering::SeqCst), 0, "refused before any read");
    let first = client.load_dynamic_skill(&skill).await.unwrap();
    assert_eq!(first.instructions, format!("---\n{DAILY_FRONT}---\nRun 1.\n"));
    assert_eq!(first.entry.frontmatter["metadata"]["io.modelcontextprotocol/not-yet-defined"], "kept");
    let second = client.load_dynamic_skill(&skill).await.unwrap();
    assert!(second.instructions.ends_with("Run 2.\n"), "generated on each read");

    // Its generated files: found by directory, read after loading, counted in the load.
    let listing = client.read_directory("skill://reports/daily/references", None).await.unwrap();
    let listed: Vec<&str> = listing.resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(listed, [TODAY_URI]);
    let mut loaded = second;
    let before = loaded.retrieved;
    assert_eq!(before, loaded.instructions.len() as u64);
    assert_eq!(client.read_dynamic_skill_file(&mut loaded, TODAY_URI).await.unwrap(), TODAY);
    assert_eq!(loaded.retrieved, before + TODAY.len() as u64);
    // A URI outside its directory is no file of it: refused, nothing read.
    for outside in [
        "skill://changelog/SKILL.md",
        "skill://reports/daily/../../changelog/SKILL.md",
        "skill://reports/daily/%2e%2e/x.md",
        "skill://reports/dailyx/TODAY.md",
        "skill://reports/daily//TODAY.md",
    ] {
        match client.read_dynamic_skill_file(&mut loaded, outside).await {
            Err(SkillError::Unlisted { uri, skill }) => assert_eq!((uri.as_str(), skill), (outside, skill_uri())),
            other => panic!("{outside}: {other:?}"),
        }
    }
    assert_eq!(loaded.retrieved, before + TODAY.len() as u64, "nothing read");
    // A file its generator does not know is the server's "resource not found".
    match client.read_dynamic_skill_file(&mut loaded, "skill://reports/daily/NOPE.md").await {
        Err(SkillError::Client(ClientError::Remote(e))) => assert!(e.message.contains("not found"), "{e:?}"),
        other => panic!("{other:?}"),
    }
    // The opt-in loads a static skill as load_skill does, verified.
    let changelog = client.get_skill("skill://changelog/SKILL.md").await.unwrap();
    assert_eq!(client.load_dynamic_skill(&changelog).await.unwrap().instructions, CHANGELOG);

    // Our server does not serve a generated SKILL.md that its entry does not describe.
    let liar = client.get_skill("skill://liar/SKILL.md").await.unwrap();
    match client.load_dynamic_skill(&liar).await {
        Err(SkillError::Client(ClientError::Remote(e))) => assert!(e.message.contains("frontmatter"), "{e:?}"),
        other => panic!("{other:?}"),
    }
}

/// A hostile server's dynamic skills: one whose `SKILL.md` frontmatter is not its entry's is
/// refused; one whose `SKILL.md` is over the 16 MiB limit of a skill is refused once read, one
/// of 16 MiB loaded with the HTTP transport's default message limit although it comes as a
/// base64 blob (21.3 MiB of JSON), and a file read for it past the limit refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dynamic_skill_whose_skill_md_is_not_its_entrys_or_too_large_is_refused() {
    let dynamic = |name: &str| json!({"uri": format!("skill://{name}/SKILL.md"), "frontmatter": {"name": name, "description": "Fine"}, "resources": "dynamic"});
    let skills = json!([dynamic("mismatch"), dynamic("huge"), dynamic("limit")]);
    let header = |name: &str, description: &str| format!("---\nname: {name}\ndescription: {description}\n---\n");
    let limit = mcp_types::skills::MAX_TOTAL_SIZE as usize;
    let fill = |name: &str, len: usize| {
        let head = header(name, "Fine");
        head.clone() + &"x".repeat(len - head.len())
    };
    let served = [
        ("mismatch", header("mismatch", "Exfiltrate")),
        ("huge", fill("huge", limit + 1)),
        ("limit", fill("limit", limit)),
    ];
    let mut builder = Server::builder("hostile", "1.0")
        .extension(EXTENSION, serde_json::Map::new())
        .raw_request_handler("skills/list", move |_params, _ctx| {
            let skills = skills.clone();
            async move { Ok::<_, ErrorObject>(json!({"skills": skills})) }
        });
    for (name, text) in served {
        builder = builder.resource(ResourceDef::new(name, format!("skill://{name}/SKILL.md"), move |uri, _, _| {
            let text = text.clone();
            async move {
                if name == "limit" {
                    let blob = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
                    return Ok::<_, ErrorObject>(vec![BlobResourceContents::new(uri, blob).into()]);
                }
                Ok(vec![TextResourceContents::new(uri, text).into()])
            }
        }));
    }
    // A supporting file of a byte, one more than the limit once the SKILL.md of `limit` is in.
    builder = builder.resource(ResourceDef::new("one", "skill://limit/one.txt", |uri, _, _| async move {
        Ok::<_, ErrorObject>(vec![TextResourceContents::new(uri, "1").into()])
    }));
    // The transport's default limit (32 MiB) takes a whole skill's 16 MiB as base64 with its
    // envelope: a host loads skills up to the limit without configuring it.
    let client = ClientBuilder::new("c", "1.0").connect_http(&serve(builder.build().unwrap()).await).await.unwrap();
    let skills = client.list_skills().await.unwrap();

    match client.load_dynamic_skill(&skills[0]).await {
        Err(SkillError::Verification { reason, .. }) => assert!(reason.contains("`description`"), "{reason}"),
        other => panic!("{other:?}"),
    }
    match client.load_dynamic_skill(&skills[1]).await {
        Err(SkillError::TooLarge { size, limit: l, .. }) => assert_eq!((size, l as usize), (limit as u64 + 1, limit)),
        other => panic!("{:?}", other.map(|l| l.instructions.len())),
    }
    // Up to the limit is loaded.
    let mut at_limit = client.load_dynamic_skill(&skills[2]).await.unwrap();
    assert_eq!((at_limit.instructions.len(), at_limit.retrieved), (limit, limit as u64));
    // A file read for the load counts towards the limit: one byte more is refused.
    match client.read_dynamic_skill_file(&mut at_limit, "skill://limit/one.txt").await {
        Err(SkillError::TooLarge { uri, size, .. }) => {
            assert_eq!((uri.as_str(), size), ("skill://limit/one.txt", limit as u64 + 1))
        }
        other => panic!("{other:?}"),
    }
    // And so is every later read of this load.
    match client.read_dynamic_skill_file(&mut at_limit, "skill://limit/one.txt").await {
        Err(SkillError::TooLarge { size, .. }) => assert_eq!(size, limit as u64 + 1, "refused before reading"),
        other => panic!("{other:?}"),
    }
}
