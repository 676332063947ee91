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
}
