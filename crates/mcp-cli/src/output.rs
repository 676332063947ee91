//! What goes to stdout: tables, JSON documents, and results rendered readably (text as
//! text, structured content as pretty JSON, images, audio and resources summarised).
//!
//! On a terminal: a bold header, columns cut to the terminal's width with `…`. Piped: the
//! same table in plain text, never cut, so that its output is stable.

use console::Style;
use mcp_types::{
    AnyResourceContents, CallToolResult, CompleteResult, ContentBlock, GetPromptResult, JsonObject, Prompt,
    ReadResourceResult, Resource, ResourceTemplate, Tool,
};
use serde_json::Value;

/// The widest a column but the last may be on a terminal.
const MAX_COLUMN: usize = 40;

/// stdout: a terminal (colour, Unicode, its width) or not.
#[derive(Debug, Clone, Copy)]
pub struct Out {
    /// A terminal: colour and Unicode.
    pub fancy: bool,
    /// Its width in columns, when it is a terminal.
    width: Option<usize>,
}

impl Out {
    /// This process's stdout.
    pub fn stdout() -> Out {
        let term = console::Term::stdout();
        let fancy = term.is_term();
        Out { fancy, width: fancy.then(|| term.size().1 as usize) }
    }

    /// A style that only applies on a terminal.
    pub fn style(&self, style: Style) -> Style {
        style.force_styling(self.fancy)
    }

    /// Prints a table: the header, then the rows, columns two spaces apart; the last column
    /// is cut to the terminal's width (never when piped).
    ///
    /// On a terminal, the other columns are at most [`MAX_COLUMN`] wide (cut with `…`).
    pub fn table(&self, header: &[&str], rows: &[Vec<String>]) {
        let columns = header.len();
        let rows: Vec<Vec<String>> = match self.width {
            Some(_) => rows.iter().map(|row| self.cut_row(row)).collect(),
            None => rows.to_vec(),
        };
        let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
        for row in &rows {
            for (i, cell) in row.iter().enumerate().take(columns.saturating_sub(1)) {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let bold = self.style(Style::new().bold());
        let header: Vec<String> = header.iter().map(|h| (*h).to_owned()).collect();
        println!("{}", bold.apply_to(self.line(&header, &widths)));
        for row in &rows {
            println!("{}", self.line(row, &widths));
        }
    }

    /// A row whose cells but the last are cut to [`MAX_COLUMN`].
    fn cut_row(&self, row: &[String]) -> Vec<String> {
        let last = row.len().saturating_sub(1);
        let cut = |(i, cell): (usize, &String)| match cell.chars().count() {
            n if i < last && n > MAX_COLUMN => format!("{}…", cell.chars().take(MAX_COLUMN - 1).collect::<String>()),
            _ => cell.clone(),
        };
        row.iter().enumerate().map(cut).collect()
    }

    /// One row, padded, its last cell cut to the width.
    fn line(&self, row: &[String], widths: &[usize]) -> String {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<width$}  ", width = widths[i]));
            }
        }
        let line = line.trim_end().to_owned();
        match self.width {
            Some(width) if line.chars().count() > width && width > 1 => {
                format!("{}…", line.chars().take(width - 1).collect::<String>())
            }
            _ => line,
        }
    }
}

/// Prints `value` as one pretty JSON document.
pub fn json(value: &impl serde::Serialize) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => println!("{text}"),
        Err(e) => eprintln!("mcp: cannot print the JSON: {e}"),
    }
}

/// The first paragraph of a description (or the title, when there is no description), in
/// one line.
fn summary(description: Option<&str>, title: Option<&str>) -> String {
    let text = description.or(title).unwrap_or("");
    let lines = text.lines().map(str::trim).skip_while(|l| l.is_empty()).take_while(|l| !l.is_empty());
    lines.collect::<Vec<_>>().join(" ")
}

/// A tool's arguments in short: `a: number, steps?: integer`.
pub fn signature(schema: &JsonObject) -> String {
    let root = Value::Object(schema.clone());
    let required: Vec<&str> =
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return String::new() };
    let mut parts = Vec::new();
    for (name, property) in properties {
        let types = crate::args::property_types(&root, property);
        let ty = if types.is_empty() { "any".to_owned() } else { types.join("|") };
        let mark = if required.contains(&name.as_str()) { "" } else { "?" };
        parts.push(format!("{name}{mark}: {ty}"));
    }
    parts.join(", ")
}

/// The rows of `mcp tools`.
pub fn tool_rows(tools: &[Tool]) -> Vec<Vec<String>> {
    let rows = tools.iter().map(|t| {
        let title = t.title.as_deref().or(t.annotations.as_ref().and_then(|a| a.title.as_deref()));
        vec![t.name.clone(), signature(&t.input_schema), summary(t.description.as_deref(), title)]
    });
    rows.collect()
}

/// The rows of `mcp prompts`.
pub fn prompt_rows(prompts: &[Prompt]) -> Vec<Vec<String>> {
    let rows = prompts.iter().map(|p| {
        let arguments = p.arguments.iter().flatten().map(|a| {
            let mark = if a.required == Some(true) { "" } else { "?" };
            format!("{}{mark}", a.name)
        });
        vec![
            p.name.clone(),
            arguments.collect::<Vec<_>>().join(", "),
            summary(p.description.as_deref(), p.title.as_deref()),
        ]
    });
    rows.collect()
}

/// The rows of `mcp resources`.
pub fn resource_rows(resources: &[Resource]) -> Vec<Vec<String>> {
    let rows = resources.iter().map(|r| {
        let mime = r.mime_type.clone().unwrap_or_default();
        vec![r.uri.clone(), r.name.clone(), mime, summary(r.description.as_deref(), r.title.as_deref())]
    });
    rows.collect()
}

/// The rows of `mcp templates`.
pub fn template_rows(templates: &[ResourceTemplate]) -> Vec<Vec<String>> {
    let rows = templates.iter().map(|t| {
        let mime = t.mime_type.clone().unwrap_or_default();
        vec![t.uri_template.clone(), t.name.clone(), mime, summary(t.description.as_deref(), t.title.as_deref())]
    });
    rows.collect()
}

/// The size in bytes of base64 `data`.
fn decoded_len(data: &str) -> usize {
    let data = data.trim_end_matches('=');
    data.len() * 3 / 4
}

/// One content block, readably: text as is, the others summarised in brackets.
pub fn content(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => format!("[image {}, {} bytes]", image.mime_type, decoded_len(&image.data)),
        ContentBlock::Audio(audio) => format!("[audio {}, {} bytes]", audio.mime_type, decoded_len(&audio.data)),
        ContentBlock::ResourceLink(link) => {
            let mime = link.mime_type.as_deref().map(|m| format!(", {m}")).unwrap_or_default();
            format!("[resource link {} ({}{mime})]", link.uri, link.name)
        }
        ContentBlock::EmbeddedResource(embedded) => format!("[resource {}]", resource_summary(&embedded.resource)),
    }
}

/// A resource's contents in short: `uri, mime, N chars` or `N bytes`.
fn resource_summary(contents: &AnyResourceContents) -> String {
    match contents {
        AnyResourceContents::TextResourceContents(t) => {
            let mime = t.mime_type.as_deref().map(|m| format!(", {m}")).unwrap_or_default();
            format!("{}{mime}, {} chars", t.uri, t.text.chars().count())
        }
        AnyResourceContents::BlobResourceContents(b) => {
            let mime = b.mime_type.as_deref().map(|m| format!(", {m}")).unwrap_or_default();
            format!("{}{mime}, {} bytes", b.uri, decoded_len(&b.blob))
        }
    }
}

/// A tool's result: its structured content as pretty JSON (and the text blocks that only
/// repeat it left out), the other blocks one after the other.
pub fn call_result(result: &CallToolResult) -> String {
    let mut parts = Vec::new();
    if let Some(structured) = &result.structured_content {
        parts.push(serde_json::to_string_pretty(structured).unwrap_or_default());
    }
    for block in &result.content {
        if let (ContentBlock::Text(text), Some(structured)) = (block, &result.structured_content)
            && serde_json::from_str::<Value>(&text.text).is_ok_and(|v| &v == structured)
        {
            continue;
        }
        parts.push(content(block));
    }
    parts.join("\n")
}

/// A prompt's messages: `role:` and its content, one after the other.
pub fn prompt_result(result: &GetPromptResult, out: &Out) -> String {
    let bold = out.style(Style::new().bold());
    let mut parts = Vec::new();
    if let Some(description) = &result.description {
        parts.push(format!("{}", out.style(Style::new().dim()).apply_to(description)));
    }
    for message in &result.messages {
        parts.push(format!("{}\n{}", bold.apply_to(format!("{}:", message.role.as_str())), content(&message.content)));
    }
    parts.join("\n\n")
}

/// A resource's contents: text as is, binary summarised.
pub fn read_result(result: &ReadResourceResult) -> String {
    let parts = result.contents.iter().map(|c| match c {
        AnyResourceContents::TextResourceContents(t) => t.text.clone(),
        blob @ AnyResourceContents::BlobResourceContents(_) => format!("[blob {}]", resource_summary(blob)),
    });
    parts.collect::<Vec<_>>().join("\n")
}

/// Completions: one value a line, then how many more the server has, if it says.
pub fn complete_result(result: &CompleteResult) -> String {
    let completion = &result.completion;
    let mut lines = completion.values.clone();
    let shown = completion.values.len() as i64;
    match (completion.total, completion.has_more) {
        (Some(total), _) if total > shown => lines.push(format!("({} more)", total - shown)),
        (_, Some(true)) => lines.push("(more)".to_owned()),
        _ => {}
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn results_render_readably() {
        let result: CallToolResult = serde_json::from_value(json!({
            "content": [
                {"type": "text", "text": "{\"a\":1}"},
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "x://y", "text": "abc", "mimeType": "text/plain"}},
                {"type": "resource_link", "uri": "x://z", "name": "z"}
            ],
            "structuredContent": {"a": 1}
        }))
        .unwrap();
        assert_eq!(
            call_result(&result),
            "{\n  \"a\": 1\n}\nhello\n[image image/png, 3 bytes]\n[resource x://y, text/plain, 3 chars]\n[resource link x://z (z)]"
        );
        let schema = json!({"type": "object", "properties": {"a": {"type": "number"}, "s": {"type": ["string", "null"]}}, "required": ["a"]});
        assert_eq!(signature(schema.as_object().unwrap()), "a: number, s?: string|null");
        assert_eq!(summary(Some("\nFirst line,\n  continued.\n\nSecond."), None), "First line, continued.");
    }

    #[test]
    fn piped_tables_are_never_cut() {
        let out = Out { fancy: false, width: None };
        assert_eq!(out.line(&["a".into(), "b".repeat(300)], &[3, 0]), format!("a    {}", "b".repeat(300)));
        let narrow = Out { fancy: true, width: Some(10) };
        assert_eq!(narrow.line(&["name".into(), "a long description".into()], &[4, 0]), "name  a l…");
        let cut = narrow.cut_row(&["x".repeat(50), "y".repeat(50)]);
        assert_eq!((cut[0].chars().count(), cut[1].len()), (MAX_COLUMN, 50));
    }
}
