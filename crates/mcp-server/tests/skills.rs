//! Skills (SEP-2640) as the server reads them: the entries it builds (nested skills' files
//! counted in the enclosing skill's) and the skills it
//! refuses to serve. Serving them over HTTP is tested with our client in
//! `mcp-client/tests/skills.rs`.

use mcp_server::skills::{Skills, SkillsError};
use mcp_server::{DefinitionError, Server};
use mcp_types::skills::SkillResources;

fn md(name: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill\n---\nBody.\n")
}

fn refused(files: &[(&str, &str)]) -> String {
    match Skills::from_files(files.iter().map(|(p, t)| (*p, t.as_bytes()))) {
        Err(SkillsError::Invalid { path, reason }) => format!("{path}: {reason}"),
        other => panic!("{files:?} was not refused: {other:?}"),
    }
}

#[test]
fn a_nested_skills_files_are_its_enclosing_skills_too() {
    let outer = md("outer");
    let inner = md("inner");
    let skills = Skills::from_files([
        ("outer/SKILL.md", outer.as_bytes()),
        ("outer/inner/SKILL.md", inner.as_bytes()),
        ("outer/inner/notes.md", b"notes".as_slice()),
        ("stray.txt", b"outside every skill".as_slice()),
    ])
    .unwrap();
    let uris = |i: usize| match &skills.entries()[i].resources {
        SkillResources::Files(files) => files.iter().map(|f| f.uri.clone()).collect::<Vec<_>>(),
        SkillResources::Dynamic(_) => panic!("dynamic"),
    };
    assert_eq!(skills.entries()[0].uri, "skill://outer/SKILL.md");
    assert_eq!(uris(0), ["skill://outer/SKILL.md", "skill://outer/inner/SKILL.md", "skill://outer/inner/notes.md"]);
    assert_eq!(skills.entries()[1].uri, "skill://outer/inner/SKILL.md");
    assert_eq!(uris(1), ["skill://outer/inner/SKILL.md", "skill://outer/inner/notes.md"]);
    assert!(Server::builder("s", "1").skills(skills).build().is_ok());
}

#[test]
fn skills_that_break_the_format_are_refused() {
    let m = md("right");
    assert!(refused(&[("wrong/SKILL.md", &m)]).contains("not the skill's name `right`"));
    assert!(refused(&[("SKILL.md", &m)]).contains("directory of its own"));
    assert!(refused(&[("right/SKILL.md", "# no frontmatter")]).contains("does not begin with"));
    let no_description = "---\nname: right\n---\n";
    assert!(refused(&[("right/SKILL.md", no_description)]).contains("`description`"));
    let bad = md("Bad--Name");
    assert!(refused(&[("Bad--Name/SKILL.md", &bad)]).contains("naming rules"));
    assert!(refused(&[("right/../x/SKILL.md", &m)]).contains("`..`"));
}

#[test]
fn a_folder_that_cannot_be_read_fails_the_build() {
    let missing = std::env::temp_dir().join(format!("mcp-skills-missing-{}", std::process::id()));
    let built = Server::builder("s", "1").skills_dir(&missing).build();
    assert!(matches!(built, Err(DefinitionError::InvalidSkills { .. })), "{built:?}");
}

fn front(name: &str, description: Option<&str>) -> serde_json::Map<String, serde_json::Value> {
    let mut front = serde_json::Map::new();
    front.insert("name".into(), name.into());
    if let Some(description) = description {
        front.insert("description".into(), description.into());
    }
    front
}

fn refused_dynamic(skills: Skills, path: &str, front: serde_json::Map<String, serde_json::Value>) -> String {
    match skills.dynamic(path, front, |_| async { Ok(String::new()) }) {
        Err(SkillsError::Invalid { path, reason }) => format!("{path}: {reason}"),
        other => panic!("{path} was not refused: {other:?}"),
    }
}

#[test]
fn a_dynamic_skill_is_listed_as_dynamic_and_one_that_breaks_the_format_is_refused() {
    let skills = Skills::default().dynamic("reports/daily", front("daily", Some("Today")), |_| async {
        Ok("---\nname: daily\ndescription: Today\n---\n".to_owned())
    });
    let skills = skills.unwrap();
    assert_eq!(skills.entries()[0].uri, "skill://reports/daily/SKILL.md");
    assert!(matches!(skills.entries()[0].resources, SkillResources::Dynamic(_)));
    assert!(Server::builder("s", "1").skills(skills).build().is_ok());

    let none = Skills::default;
    assert!(refused_dynamic(none(), "reports/weekly", front("daily", Some("d"))).contains("not the skill's name"));
    assert!(refused_dynamic(none(), "Bad--Name", front("Bad--Name", Some("d"))).contains("naming rules"));
    assert!(refused_dynamic(none(), "daily", front("daily", None)).contains("`description`"));
    assert!(refused_dynamic(none(), "daily", front("daily", Some(""))).contains("`description`"));
    assert!(refused_dynamic(none(), "../daily", front("daily", Some("d"))).contains("`..`"));
    let m = md("daily");
    let files = Skills::from_files([("daily/SKILL.md", m.as_bytes())]).unwrap();
    assert!(refused_dynamic(files, "daily", front("daily", Some("d"))).contains("already served"));

    // Generated files go to a dynamic skill, once.
    let files = |skills: Skills, path: &str| match skills.dynamic_files(
        path,
        |_| async { Ok(Vec::new()) },
        |_, _| async { Ok(None) },
    ) {
        Err(SkillsError::Invalid { reason, .. }) => reason,
        other => panic!("{path} was not refused: {other:?}"),
    };
    let m = md("changelog");
    let fixed = Skills::from_files([("changelog/SKILL.md", m.as_bytes())]).unwrap();
    assert!(files(fixed, "changelog").contains("no dynamic skill"));
    let daily = Skills::default().dynamic("daily", front("daily", Some("d")), |_| async { Ok(String::new()) });
    let once = daily.unwrap().dynamic_files("daily", |_| async { Ok(Vec::new()) }, |_, _| async { Ok(None) });
    assert!(files(once.unwrap(), "daily").contains("already has generated files"));
}

/// A dynamic skill's generated supporting files over HTTP (raw 2026-07-28 requests on a real
/// socket): read with the media type their extension gives (bytes as base64), listed by
/// `resources/directory/read` in the skill's directory and below (a path that is not clean,
/// or `SKILL.md`, left out; a file the predicate hides too), not in `resources/list`; a path
/// the generator does not know, a traversal, and a hidden skill's files all answered as a
/// resource that does not exist, without asking the generator.
#[cfg(feature = "http")]
mod generated_files {
    use std::sync::{Arc, Mutex};

    use mcp_server::Server;
    use mcp_server::mcp_transport_http::server::{self, HttpServerConfig};
    use mcp_server::skills::Skills;
    use serde_json::{Value, json};

    use super::{front, md};

    const DAILY: &str = "---\nname: daily\ndescription: Today\n---\nSee references/TODAY.md.\n";
    const LISTED: [&str; 8] = [
        "references/TODAY.md",
        "references/hidden.md",
        "data/nums.json",
        "data/raw/blob.bin",
        "../escape.md",
        "data//empty.md",
        "SKILL.md",
        "./dot.md",
    ];

    fn generated(path: &str) -> Option<Vec<u8>> {
        match path {
            "references/TODAY.md" => Some(b"Open tickets: 3\n".to_vec()),
            "references/hidden.md" => Some(b"hidden\n".to_vec()),
            "data/nums.json" => Some(b"[1, 2]".to_vec()),
            "data/raw/blob.bin" => Some(vec![0xff, 0x00, 0x01]),
            _ => None,
        }
    }

    struct Harness {
        url: String,
        http: reqwest::Client,
        /// The paths the generators were asked with, and how often a list was asked for.
        asked: Arc<Mutex<Vec<String>>>,
    }

    async fn start() -> Harness {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let (asked_daily, asked_secret) = (asked.clone(), asked.clone());
        let (listed_daily, listed_secret) = (asked.clone(), asked.clone());
        let m = md("changelog");
        let skills = Skills::from_files([("changelog/SKILL.md", m.as_bytes())])
            .unwrap()
            .dynamic("reports/daily", front("daily", Some("Today")), |_| async { Ok(DAILY.to_owned()) })
            .unwrap()
            .dynamic_files(
                "reports/daily",
                move |_ctx| {
                    listed_daily.lock().unwrap().push("list daily".to_owned());
                    async { Ok(LISTED.iter().map(|p| (*p).to_owned()).collect()) }
                },
                move |_ctx, path: String| {
                    asked_daily.lock().unwrap().push(path.clone());
                    async move { Ok(generated(&path)) }
                },
            )
            .unwrap()
            .dynamic("secret", front("secret", Some("Hidden")), |_| async {
                Ok("---\nname: secret\ndescription: Hidden\n---\n".to_owned())
            })
            .unwrap()
            .dynamic_files(
                "secret",
                move |_ctx| {
                    listed_secret.lock().unwrap().push("list secret".to_owned());
                    async { Ok(vec!["notes.md".to_owned()]) }
                },
                move |_ctx, path: String| {
                    asked_secret.lock().unwrap().push(format!("secret {path}"));
                    async { Ok(Some(b"s".to_vec())) }
                },
            )
            .unwrap();
        let server = Server::builder("generated", "1.0")
            .skills(skills)
            .visibility(|item, _who| item.name() != "secret" && item.name() != "hidden.md")
            .build()
            .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(server::serve_listener(Arc::new(server), HttpServerConfig::default(), listener));
        Harness { url, http: reqwest::Client::new(), asked }
    }

    impl Harness {
        /// The response body of a 2026-07-28 request.
        async fn call(&self, method: &str, mut params: Value) -> Value {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {},
            });
            let mut request = self
                .http
                .post(&self.url)
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", method);
            if let Some(uri) = params["uri"].as_str() {
                request = request.header("mcp-name", uri);
            }
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
            request.body(body.to_string()).send().await.unwrap().json().await.unwrap()
        }

        async fn read(&self, uri: &str) -> Value {
            self.call("resources/read", json!({"uri": uri})).await
        }

        /// The error of reading `uri`, with `uri` written `URI`: to compare with another's.
        async fn read_error(&self, uri: &str) -> String {
            let body = self.read(uri).await;
            assert!(body["error"].is_object(), "{uri} was read: {body}");
            let quoted = Value::from(uri).to_string();
            body["error"].to_string().replace(&quoted[1..quoted.len() - 1], "URI")
        }

        /// The children of the directory `uri`: (uri, mimeType, size).
        async fn children(&self, uri: &str) -> Vec<(String, Value, Value)> {
            let body = self.call("resources/directory/read", json!({"uri": uri})).await;
            let resources = body["result"]["resources"].as_array().unwrap_or_else(|| panic!("{uri}: {body}"));
            resources
                .iter()
                .map(|r| (r["uri"].as_str().unwrap().to_owned(), r["mimeType"].clone(), r["size"].clone()))
                .collect()
        }

        fn asked(&self) -> Vec<String> {
            self.asked.lock().unwrap().clone()
        }
    }

    #[tokio::test]
    async fn a_dynamic_skills_generated_files_are_read_and_listed_by_directory() {
        let h = start().await;
        let today = h.read("skill://reports/daily/references/TODAY.md").await;
        assert_eq!(
            today["result"]["contents"],
            json!([{"uri": "skill://reports/daily/references/TODAY.md", "mimeType": "text/markdown", "text": "Open tickets: 3\n"}])
        );
        let nums = h.read("skill://reports/daily/data/nums.json").await;
        assert_eq!(nums["result"]["contents"][0]["mimeType"], "application/json");
        assert_eq!(nums["result"]["contents"][0]["text"], "[1, 2]");
        let blob = h.read("skill://reports/daily/data/raw/blob.bin").await;
        assert_eq!(
            blob["result"]["contents"],
            json!([{"uri": "skill://reports/daily/data/raw/blob.bin", "mimeType": "application/octet-stream", "blob": "/wAB"}])
        );
        // The generated SKILL.md is still the skill's own.
        assert_eq!(h.read("skill://reports/daily/SKILL.md").await["result"]["contents"][0]["text"], DAILY);

        let dir = |uri: &str, mime: &str| (uri.to_owned(), json!(mime), Value::Null);
        assert_eq!(
            h.children("skill://reports/daily").await,
            [
                dir("skill://reports/daily/SKILL.md", "text/markdown"),
                dir("skill://reports/daily/data", "inode/directory"),
                dir("skill://reports/daily/references", "inode/directory"),
            ]
        );
        // hidden.md is hidden by the predicate; ../escape.md, data//empty.md and ./dot.md are not clean.
        assert_eq!(
            h.children("skill://reports/daily/references").await,
            [dir("skill://reports/daily/references/TODAY.md", "text/markdown")]
        );
        assert_eq!(
            h.children("skill://reports/daily/data").await,
            [
                dir("skill://reports/daily/data/nums.json", "application/json"),
                dir("skill://reports/daily/data/raw", "inode/directory"),
            ]
        );
        assert_eq!(h.children("skill://reports").await, [dir("skill://reports/daily", "inode/directory")]);
        let absent = h.call("resources/directory/read", json!({"uri": "skill://reports/daily/nothing"})).await;
        assert_eq!(absent["error"]["code"], -32602, "{absent}");

        // Read by directory, not in resources/list (which lists what is fixed at build).
        let list = h.call("resources/list", json!({})).await;
        let uris: Vec<&str> =
            list["result"]["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
        assert_eq!(uris, ["skill://changelog/SKILL.md", "skill://reports/daily/SKILL.md"]);
    }

    #[tokio::test]
    async fn an_unknown_generated_path_a_traversal_and_a_hidden_skills_files_are_unknown() {
        let h = start().await;
        let missing = h.read_error("skill://absent/references/NOPE.md").await;
        // Not known to the generator: asked, answered as a missing resource.
        assert_eq!(h.read_error("skill://reports/daily/references/NOPE.md").await, missing);
        assert_eq!(h.asked(), ["references/NOPE.md"]);
        // Hidden by the predicate as a file, as a static skill's file would be: not asked.
        assert_eq!(h.read_error("skill://reports/daily/references/hidden.md").await, missing);
        for traversal in [
            "skill://reports/daily/../../changelog/SKILL.md",
            "skill://reports/daily/references/../TODAY.md",
            "skill://reports/daily/%2e%2e/changelog/SKILL.md",
            "skill://reports/daily/%2E./x.md",
            "skill://reports/daily//references/TODAY.md",
            "skill://reports/daily/./references/TODAY.md",
            "skill://reports/daily/references\\..\\TODAY.md",
            "skill://reports/daily/",
        ] {
            assert_eq!(h.read_error(traversal).await, missing, "{traversal}");
        }
        assert_eq!(h.asked(), ["references/NOPE.md"], "no traversal reaches the generator");

        // A hidden dynamic skill's files are unknown, with the bytes of what does not exist;
        // its generators are not asked.
        assert_eq!(h.read_error("skill://secret/notes.md").await, missing);
        let absent = h.call("resources/directory/read", json!({"uri": "skill://absent"})).await;
        let secret = h.call("resources/directory/read", json!({"uri": "skill://secret"})).await;
        assert_eq!(secret["error"].to_string().replace("secret", "absent"), absent["error"].to_string());
        assert!(h.asked().iter().all(|a| !a.contains("secret")), "{:?}", h.asked());
    }
}
