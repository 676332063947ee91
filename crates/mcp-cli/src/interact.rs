//! What the server asks of the user (sampling, elicitation), answered at the terminal, or
//! refused with `--no-input`.
//!
//! At a terminal (stdin is a tty, and no `--no-input`), an elicitation form is asked field by
//! field on stderr (its title and description, its type, numbered choices, its default, whether
//! it is required), each answer checked against the field's type and asked again until it
//! fits; then the answer is sent (accept), or the user declines or cancels. A sampling request
//! shows the system prompt, the messages and the tools offered, and reads the reply from the
//! user (an empty reply declines: an error answer). Elsewhere both are refused, with a note on
//! stderr: elicitation is declined, sampling answered with the error "refused: no input".
//! stdout stays for the command's results.

use std::io::{BufRead, IsTerminal as _, Write};
use std::sync::{Arc, Mutex};

use mcp_sdk::client::ClientBuilder;
use mcp_types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestFormParams, ElicitRequestParams,
    ElicitRequestURLParams, ElicitResult, ElicitResultContentValue, ErrorObject, Role, TextContent,
};
use serde_json::Value;

use crate::cli::Global;

/// The longest answer line read (longer lines are refused, and the rest of the line dropped).
const MAX_LINE: usize = 64 * 1024;

/// The error code of a refused sampling request (the specification's example of a user who
/// rejects sampling uses -1).
const REFUSED: i64 = -1;

/// Runs a prompt (given as `&mut dyn FnMut()`) with the rest of the terminal out of its way:
/// a progress bar hidden while the user answers (indicatif's `ProgressBar::suspend`).
pub type Around = Arc<dyn Fn(&mut dyn FnMut()) + Send + Sync>;

/// `builder` with the handlers that answer the server's sampling and elicitation requests:
/// at the terminal, each prompt run through `around` (which hides a progress bar that would
/// otherwise draw over the questions); refused with `--no-input` or without a terminal.
pub fn install_with(builder: ClientBuilder, global: &Global, around: Option<Around>) -> ClientBuilder {
    if global.no_input || !std::io::stdin().is_terminal() {
        return builder
            .on_elicitation(|params: ElicitRequestParams| async move {
                eprintln!("mcp: the server asked for input ({:?}): declined (no input)", elicit_message(&params));
                Ok(ElicitResult::new(ElicitAction::Decline))
            })
            .on_sampling(|_params: CreateMessageRequestParams| async move {
                eprintln!("mcp: the server asked for a completion (sampling): refused (no input)");
                Err(ErrorObject::new(REFUSED, "refused: no input"))
            });
    }
    // One question at a time, whatever the server asks at once.
    let turn = Terminal { turn: Arc::new(Mutex::new(())), around };
    let sampling = turn.clone();
    // `sampling_tools`: the server may offer tools to the model (shown; the user answers in
    // text, which a model may always do).
    builder
        .elicitation_url_mode()
        .sampling_tools()
        .on_elicitation(move |params: ElicitRequestParams| turn.clone().ask(move |io| io.elicit(&params)))
        .on_sampling(move |params: CreateMessageRequestParams| sampling.clone().ask(move |io| io.sample(&params)))
}

/// The terminal, shared by the handlers: one question at a time, each run through `around`.
#[derive(Clone)]
struct Terminal {
    turn: Arc<Mutex<()>>,
    around: Option<Around>,
}

/// Runs `f` through `around` (or as it is); `None` if `around` did not run it.
fn run_around<T>(around: Option<&Around>, f: impl FnOnce() -> T) -> Option<T> {
    let Some(around) = around else { return Some(f()) };
    let mut f = Some(f);
    let mut out = None;
    around(&mut || {
        if let Some(f) = f.take() {
            out = Some(f());
        }
    });
    out
}

/// The message of an elicitation request.
fn elicit_message(params: &ElicitRequestParams) -> &str {
    match params {
        ElicitRequestParams::ElicitRequestForm(form) => &form.message,
        ElicitRequestParams::ElicitRequestURL(url) => &url.message,
    }
}

/// The prompter of this process's terminal: answers from stdin, questions on stderr.
type TerminalPrompter = Prompter<std::io::StdinLock<'static>, std::io::Stderr>;

impl Terminal {
    /// Runs `ask` on a blocking thread with the terminal (stdin, stderr), one at a time.
    async fn ask<T, F>(self, ask: F) -> Result<T, ErrorObject>
    where
        T: Send + 'static,
        F: FnOnce(&mut TerminalPrompter) -> std::io::Result<Result<T, ErrorObject>> + Send + 'static,
    {
        let asked = tokio::task::spawn_blocking(move || {
            let _turn = self.turn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let colour = console::colors_enabled_stderr();
            let mut io = Prompter::new(std::io::stdin().lock(), std::io::stderr(), colour);
            run_around(self.around.as_ref(), || ask(&mut io))
        })
        .await;
        match asked {
            Ok(Some(Ok(answer))) => answer,
            Ok(Some(Err(e))) => Err(ErrorObject::new(-32603, format!("cannot read the answer: {e}"))),
            Ok(None) => Err(ErrorObject::new(-32603, "the prompt did not run")),
            Err(e) => Err(ErrorObject::new(-32603, format!("the prompt failed: {e}"))),
        }
    }
}

/// Reads a line of at most `max` bytes (without its end); `None` at the end of input. A longer
/// line is consumed to its end and refused.
pub(crate) fn read_line_bounded<R: BufRead>(reader: &mut R, max: usize) -> std::io::Result<Option<Result<String, ()>>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            if line.is_empty() && !too_long {
                return Ok(None);
            }
            break;
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if line.len() + chunk.len() > max {
            too_long = true;
        } else if !too_long {
            line.extend_from_slice(chunk);
        }
        let used = done.unwrap_or(chunk.len());
        reader.consume(used);
        if done.is_some() {
            break;
        }
    }
    if too_long {
        return Ok(Some(Err(())));
    }
    let text = String::from_utf8_lossy(&line);
    Ok(Some(Ok(text.trim_end_matches('\r').to_owned())))
}

/// One field of an elicitation form.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    name: String,
    title: Option<String>,
    description: Option<String>,
    kind: Kind,
    required: bool,
    default: Option<Value>,
}

/// What a field holds, and its constraints.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Text {
        min: Option<u64>,
        max: Option<u64>,
        format: Option<String>,
    },
    Number {
        integer: bool,
        min: Option<f64>,
        max: Option<f64>,
    },
    Boolean,
    /// One of the choices: (value, label).
    Choice(Vec<(String, String)>),
    /// Some of the choices.
    Multi {
        choices: Vec<(String, String)>,
        min: Option<u64>,
        max: Option<u64>,
    },
}

/// The choices of an `enum` (labelled by `enumNames`, if any) or a `oneOf`/`anyOf` of
/// `const`s (labelled by their `title`).
fn choices(schema: &Value) -> Option<Vec<(String, String)>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let names = schema.get("enumNames").and_then(Value::as_array);
        let label = |i: usize, v: &str| names.and_then(|n| n.get(i)).and_then(Value::as_str).unwrap_or(v).to_owned();
        return Some(
            values.iter().filter_map(Value::as_str).enumerate().map(|(i, v)| (v.to_owned(), label(i, v))).collect(),
        );
    }
    let options = schema.get("oneOf").or_else(|| schema.get("anyOf"))?.as_array()?;
    let choices = options
        .iter()
        .filter_map(|o| {
            let value = o.get("const")?.as_str()?.to_owned();
            let label = o.get("title").and_then(Value::as_str).unwrap_or(&value).to_owned();
            Some((value, label))
        })
        .collect();
    Some(choices)
}

impl Field {
    /// The field `name` of a form, from its schema.
    pub(crate) fn new(name: &str, schema: &Value, required: bool) -> Field {
        let text = |key: &str| schema.get(key).and_then(Value::as_str).map(str::to_owned);
        let uint = |key: &str| schema.get(key).and_then(Value::as_u64);
        let float = |key: &str| schema.get(key).and_then(Value::as_f64);
        let kind = match (schema.get("type").and_then(Value::as_str), choices(schema)) {
            (Some("array"), _) => Kind::Multi {
                choices: schema.get("items").and_then(choices).unwrap_or_default(),
                min: uint("minItems"),
                max: uint("maxItems"),
            },
            (_, Some(choices)) => Kind::Choice(choices),
            (Some("boolean"), None) => Kind::Boolean,
            (Some(t @ ("integer" | "number")), None) => {
                Kind::Number { integer: t == "integer", min: float("minimum"), max: float("maximum") }
            }
            _ => Kind::Text { min: uint("minLength"), max: uint("maxLength"), format: text("format") },
        };
        Field {
            name: name.to_owned(),
            title: text("title"),
            description: text("description"),
            kind,
            required,
            default: schema.get("default").cloned(),
        }
    }

    /// The field's type and constraints, in words.
    fn describe(&self) -> String {
        let range = |what: &str, min: Option<String>, max: Option<String>| match (min, max) {
            (Some(a), Some(b)) => format!("{what} from {a} to {b}"),
            (Some(a), None) => format!("{what} at least {a}"),
            (None, Some(b)) => format!("{what} at most {b}"),
            (None, None) => what.to_owned(),
        };
        match &self.kind {
            Kind::Text { min, max, format } => {
                let base = format.as_ref().map_or("text".to_owned(), |f| format!("text ({f})"));
                match (min, max) {
                    (None, None) => base,
                    _ => range(&format!("{base}, length"), min.map(|m| m.to_string()), max.map(|m| m.to_string())),
                }
            }
            Kind::Number { integer, min, max } => {
                range(if *integer { "integer" } else { "number" }, min.map(fmt_num), max.map(fmt_num))
            }
            Kind::Boolean => "yes or no (y/n)".to_owned(),
            Kind::Choice(_) => "one of (its number or value):".to_owned(),
            Kind::Multi { min, max, .. } => range(
                "some of (numbers or values, comma-separated), count",
                min.map(|m| m.to_string()),
                max.map(|m| m.to_string()),
            ),
        }
    }

    /// The field's value for the answer `line`: `Ok(None)` leaves the field out; `Err` says
    /// why the answer does not fit (the question is asked again).
    pub(crate) fn parse(&self, line: &str) -> Result<Option<ElicitResultContentValue>, String> {
        let line = line.trim();
        if line.is_empty() {
            if let Some(default) = &self.default {
                return serde_json::from_value(default.clone()).map(Some).map_err(|e| format!("bad default: {e}"));
            }
            return if self.required { Err("required: an answer is needed".to_owned()) } else { Ok(None) };
        }
        if line == "-" && !self.required {
            return Ok(None);
        }
        self.parse_value(line).map(Some)
    }

    fn parse_value(&self, line: &str) -> Result<ElicitResultContentValue, String> {
        match &self.kind {
            Kind::Text { min, max, format } => parse_text(line, *min, *max, format.as_deref()),
            Kind::Number { integer, min, max } => parse_number(line, *integer, *min, *max),
            Kind::Boolean => match line.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" => Ok(ElicitResultContentValue::Boolean(true)),
                "n" | "no" | "false" => Ok(ElicitResultContentValue::Boolean(false)),
                _ => Err("answer y or n".to_owned()),
            },
            Kind::Choice(choices) => pick(choices, line).map(ElicitResultContentValue::String),
            Kind::Multi { choices, min, max } => {
                let picked = line.split(',').map(|p| pick(choices, p.trim())).collect::<Result<Vec<_>, _>>()?;
                let n = picked.len() as u64;
                if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
                    return Err(format!("choose {}", self.describe().trim_start_matches("some of ")));
                }
                Ok(ElicitResultContentValue::Array(picked))
            }
        }
    }
}

/// A number without a needless `.0`.
fn fmt_num(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 { format!("{}", n as i64) } else { n.to_string() }
}

/// A choice by its number (from 1) or its value.
fn pick(choices: &[(String, String)], answer: &str) -> Result<String, String> {
    if let Ok(n) = answer.parse::<usize>()
        && let Some((value, _)) = n.checked_sub(1).and_then(|i| choices.get(i))
    {
        return Ok(value.clone());
    }
    choices
        .iter()
        .find(|(value, label)| value == answer || label == answer)
        .map(|(value, _)| value.clone())
        .ok_or_else(|| format!("{answer:?} is not one of the choices: give its number (1 to {})", choices.len()))
}

fn parse_text(
    line: &str,
    min: Option<u64>,
    max: Option<u64>,
    format: Option<&str>,
) -> Result<ElicitResultContentValue, String> {
    let len = line.chars().count() as u64;
    if let Some(min) = min.filter(|m| len < *m) {
        return Err(format!("at least {min} characters"));
    }
    if let Some(max) = max.filter(|m| len > *m) {
        return Err(format!("at most {max} characters"));
    }
    let fits = match format {
        Some("email") => line.split_once('@').is_some_and(|(a, b)| !a.is_empty() && b.contains('.')),
        Some("uri") => line.split_once(':').is_some_and(|(scheme, rest)| !scheme.is_empty() && !rest.is_empty()),
        Some("date") => is_date(line),
        Some("date-time") => line.split_once(['T', 't']).is_some_and(|(d, t)| is_date(d) && t.len() >= 8),
        _ => true,
    };
    if !fits {
        return Err(format!("not a valid {}", format.unwrap_or("value")));
    }
    Ok(ElicitResultContentValue::String(line.to_owned()))
}

/// `YYYY-MM-DD`.
fn is_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    matches!(parts.as_slice(), [y, m, d] if y.len() == 4 && m.len() == 2 && d.len() == 2
        && parts.iter().all(|p| p.bytes().all(|b| b.is_ascii_digit()))
        && (1..=12).contains(&m.parse::<u8>().unwrap_or(0)) && (1..=31).contains(&d.parse::<u8>().unwrap_or(0)))
}

fn parse_number(
    line: &str,
    integer: bool,
    min: Option<f64>,
    max: Option<f64>,
) -> Result<ElicitResultContentValue, String> {
    let (value, number) = if integer {
        let n: i64 = line.parse().map_err(|_| format!("{line:?} is not an integer"))?;
        (ElicitResultContentValue::Integer(n), n as f64)
    } else {
        let n: f64 =
            line.parse().ok().filter(|n: &f64| n.is_finite()).ok_or_else(|| format!("{line:?} is not a number"))?;
        (ElicitResultContentValue::Number(n), n)
    };
    if let Some(min) = min.filter(|m| number < *m) {
        return Err(format!("at least {}", fmt_num(min)));
    }
    if let Some(max) = max.filter(|m| number > *m) {
        return Err(format!("at most {}", fmt_num(max)));
    }
    Ok(value)
}

/// The fields of a form, in the order the server lists them (the decoded form keeps it).
pub(crate) fn fields(form: &ElicitRequestFormParams) -> Vec<Field> {
    let schema = &form.requested_schema;
    let required = |name: &str| schema.required.iter().flatten().any(|r| r == name);
    schema
        .properties
        .iter()
        .map(|(name, definition)| {
            let definition = serde_json::to_value(definition).unwrap_or_default();
            Field::new(name, &definition, required(name))
        })
        .collect()
}

/// Questions on a writer (stderr), answers from a reader (stdin).
pub(crate) struct Prompter<R, W> {
    input: R,
    out: W,
    colour: bool,
}

impl<R: BufRead, W: Write> Prompter<R, W> {
    /// A prompter; `colour` styles the questions.
    pub(crate) fn new(input: R, out: W, colour: bool) -> Self {
        Prompter { input, out, colour }
    }

    fn style(&self, text: &str, style: console::Style) -> String {
        style.force_styling(self.colour).apply_to(text).to_string()
    }

    /// Asks `question`; the answer, `None` at the end of input.
    fn ask(&mut self, question: &str) -> std::io::Result<Option<String>> {
        loop {
            write!(self.out, "{question}")?;
            self.out.flush()?;
            match read_line_bounded(&mut self.input, MAX_LINE)? {
                None => {
                    writeln!(self.out)?;
                    return Ok(None);
                }
                Some(Ok(line)) => return Ok(Some(line)),
                Some(Err(())) => writeln!(self.out, "  the answer is too long (at most {MAX_LINE} bytes)")?,
            }
        }
    }

    /// Accept, decline or cancel (`default` on an empty answer; cancel at the end of input).
    fn choose_action(&mut self, question: &str) -> std::io::Result<ElicitAction> {
        loop {
            let Some(answer) = self.ask(question)? else { return Ok(ElicitAction::Cancel) };
            match answer.trim().to_ascii_lowercase().as_str() {
                "" | "a" | "accept" | "y" | "yes" => return Ok(ElicitAction::Accept),
                "d" | "decline" | "n" | "no" => return Ok(ElicitAction::Decline),
                "c" | "cancel" => return Ok(ElicitAction::Cancel),
                _ => writeln!(self.out, "  answer a (accept), d (decline) or c (cancel)")?,
            }
        }
    }

    /// Answers an elicitation request.
    pub(crate) fn elicit(
        &mut self,
        params: &ElicitRequestParams,
    ) -> std::io::Result<Result<ElicitResult, ErrorObject>> {
        match params {
            ElicitRequestParams::ElicitRequestForm(form) => self.form(form).map(Ok),
            ElicitRequestParams::ElicitRequestURL(url) => self.url(url).map(Ok),
        }
    }

    /// A form, field by field.
    pub(crate) fn form(&mut self, form: &ElicitRequestFormParams) -> std::io::Result<ElicitResult> {
        let heading = self.style("The server asks:", console::Style::new().bold().cyan());
        writeln!(self.out, "\n{heading} {}", form.message)?;
        let question = "Answer? [a]ccept (fill in the form) / [d]ecline / [c]ancel: ";
        let action = self.choose_action(question)?;
        if action != ElicitAction::Accept {
            return Ok(ElicitResult::new(action));
        }
        let fields = fields(form);
        let mut content = std::collections::BTreeMap::new();
        for (i, field) in fields.iter().enumerate() {
            self.show_field(field, i + 1, fields.len())?;
            let Some(value) = self.field_answer(field)? else { return Ok(ElicitResult::new(ElicitAction::Cancel)) };
            if let Some(value) = value {
                content.insert(field.name.clone(), value);
            }
        }
        let action = self.choose_action("Send this answer? [a]ccept / [d]ecline / [c]ancel: ")?;
        Ok(match action {
            ElicitAction::Accept => ElicitResult::new(action).with_content(content),
            other => ElicitResult::new(other),
        })
    }

    /// The heading of a field: number, name, title, description, type, choices, default.
    fn show_field(&mut self, field: &Field, n: usize, of: usize) -> std::io::Result<()> {
        let name = self.style(&field.name, console::Style::new().bold());
        let title = field.title.as_ref().map(|t| format!(": {t}")).unwrap_or_default();
        let required =
            if field.required { self.style(" (required)", console::Style::new().yellow()) } else { String::new() };
        writeln!(self.out, "[{n}/{of}] {name}{title}{required}")?;
        if let Some(description) = &field.description {
            writeln!(self.out, "      {description}")?;
        }
        writeln!(self.out, "      {}", field.describe())?;
        if let Kind::Choice(choices) | Kind::Multi { choices, .. } = &field.kind {
            for (i, (value, label)) in choices.iter().enumerate() {
                let also = if label != value { format!(" ({value})") } else { String::new() };
                writeln!(self.out, "        {}) {label}{also}", i + 1)?;
            }
        }
        match &field.default {
            Some(default) => writeln!(self.out, "      default: {default} (press Enter to keep it)")?,
            None if !field.required => writeln!(self.out, "      optional: press Enter to leave it out")?,
            None => {}
        }
        Ok(())
    }

    /// Asks a field until the answer fits; `None` at the end of input.
    fn field_answer(&mut self, field: &Field) -> std::io::Result<Option<Option<ElicitResultContentValue>>> {
        loop {
            let Some(line) = self.ask("      > ")? else { return Ok(None) };
            match field.parse(&line) {
                Ok(value) => return Ok(Some(value)),
                Err(why) => {
                    let why = self.style(&why, console::Style::new().red());
                    writeln!(self.out, "      {why}")?;
                }
            }
        }
    }

    /// A URL to visit.
    fn url(&mut self, url: &ElicitRequestURLParams) -> std::io::Result<ElicitResult> {
        let heading = self.style("The server asks you to open:", console::Style::new().bold().cyan());
        writeln!(self.out, "\n{heading} {}\n  {}", url.url, url.message)?;
        self.choose_action("Open it, then: [a]ccept / [d]ecline / [c]ancel: ").map(ElicitResult::new)
    }

    /// Answers a sampling request with the user's reply.
    pub(crate) fn sample(
        &mut self,
        params: &CreateMessageRequestParams,
    ) -> std::io::Result<Result<CreateMessageResult, ErrorObject>> {
        let heading = self.style("The server asks for a completion (sampling):", console::Style::new().bold().cyan());
        writeln!(self.out, "\n{heading} at most {} tokens", params.max_tokens)?;
        if let Some(system) = &params.system_prompt {
            writeln!(self.out, "  system: {system}")?;
        }
        for message in &params.messages {
            let role = serde_json::to_value(&message.role).ok().and_then(|r| r.as_str().map(str::to_owned));
            let blocks = serde_json::to_value(message.content.blocks()).unwrap_or_default();
            for block in blocks.as_array().into_iter().flatten() {
                writeln!(self.out, "  {}: {}", role.as_deref().unwrap_or("?"), show_block(block))?;
            }
        }
        for tool in params.tools.iter().flatten() {
            let description = tool.description.as_deref().map(|d| format!(": {d}")).unwrap_or_default();
            writeln!(self.out, "  tool offered: {}{description}", tool.name)?;
        }
        let reply = self.ask("Your reply (one line; empty to decline): ")?.unwrap_or_default();
        if reply.trim().is_empty() {
            return Ok(Err(ErrorObject::new(REFUSED, "declined by the user")));
        }
        let result = CreateMessageResult::new(Role::Assistant, TextContent::new(reply), "human (mcp)")
            .with_stop_reason("endTurn");
        Ok(Ok(result))
    }
}

/// A content block of a sampling message, in one line.
fn show_block(block: &Value) -> String {
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("?");
    match kind {
        "text" => block.get("text").and_then(Value::as_str).unwrap_or_default().to_owned(),
        "image" | "audio" => {
            format!("[{kind} {}]", block.get("mimeType").and_then(Value::as_str).unwrap_or("?"))
        }
        "tool_use" => {
            format!("[tool use {} {}]", block.get("name").and_then(Value::as_str).unwrap_or("?"), block["input"])
        }
        other => format!("[{other}]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(schema: Value) -> ElicitRequestFormParams {
        serde_json::from_value(json!({"message": "Order book?", "requestedSchema": schema})).unwrap()
    }

    /// A form decoded from its text, as it comes from the server (a `Value` sorts members).
    fn form_text(schema: &str) -> ElicitRequestFormParams {
        serde_json::from_str(&format!(r#"{{"message": "Order book?", "requestedSchema": {schema}}}"#)).unwrap()
    }

    fn run_form(schema: Value, input: &str) -> (ElicitResult, String) {
        let mut out = Vec::new();
        let result = Prompter::new(input.as_bytes(), &mut out, false).form(&form(schema)).unwrap();
        (result, String::from_utf8(out).unwrap())
    }

    fn order_schema() -> Value {
        json!({"type": "object", "properties": {
            "quantity": {"type": "integer", "minimum": 1, "default": 1, "title": "How many"},
            "gift": {"type": "boolean", "default": false},
            "colour": {"type": "string", "enum": ["red", "green"], "enumNames": ["Red", "Green"]},
            "email": {"type": "string", "format": "email", "description": "For the receipt"},
            "sizes": {"type": "array", "items": {"anyOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]}, "minItems": 1}
        }, "required": ["quantity", "email"]})
    }

    #[test]
    fn a_form_is_asked_field_by_field_and_each_answer_checked() {
        // Built with `json!`, whose objects sort their members: the fields come alphabetically.
        let input = "\n2\nyes\nann@example.com\nmaybe\ny\nzero\n0\n3\n1, Large\n\n";
        let (result, shown) = run_form(order_schema(), input);
        assert_eq!(result.action, ElicitAction::Accept);
        let content = result.content.unwrap();
        assert_eq!(content["colour"], ElicitResultContentValue::String("green".into()));
        assert_eq!(content["email"], ElicitResultContentValue::String("ann@example.com".into()));
        assert_eq!(content["gift"], ElicitResultContentValue::Boolean(true));
        assert_eq!(content["quantity"], ElicitResultContentValue::Integer(3));
        assert_eq!(content["sizes"], ElicitResultContentValue::Array(vec!["s".into(), "l".into()]));
        for expected in [
            "The server asks: Order book?",
            "[1/5] colour",
            "        1) Red (red)",
            "        2) Green (green)",
            "[2/5] email (required)",
            "      For the receipt",
            "      text (email)",
            "[4/5] quantity: How many (required)",
            "      integer at least 1",
            "      default: 1 (press Enter to keep it)",
            "      answer y or n",
            "      \"zero\" is not an integer",
            "      at least 1",
            "        2) Large (l)",
        ] {
            assert!(shown.contains(expected), "{expected:?} not in:\n{shown}");
        }
    }

    #[test]
    fn fields_are_asked_in_the_servers_order() {
        let form = form_text(
            r#"{"type": "object", "properties": {"z": {"type": "string"}, "a": {"type": "integer"},
                "m": {"type": "boolean"}}, "required": ["a"]}"#,
        );
        let asked: Vec<(String, bool)> = fields(&form).into_iter().map(|f| (f.name, f.required)).collect();
        assert_eq!(asked, [("z".into(), false), ("a".into(), true), ("m".into(), false)]);
        let mut out = Vec::new();
        let result = Prompter::new(
            "a
last
7
y
a
"
            .as_bytes(),
            &mut out,
            false,
        )
        .form(&form)
        .unwrap();
        let shown = String::from_utf8(out).unwrap();
        let at = |s: &str| shown.find(s).unwrap_or_else(|| panic!("{s:?} not in:\n{shown}"));
        assert!(at("[1/3] z") < at("[2/3] a (required)") && at("[2/3] a") < at("[3/3] m"), "{shown}");
        let content = result.content.unwrap();
        assert_eq!(content["z"], ElicitResultContentValue::String("last".into()));
        assert_eq!(content["a"], ElicitResultContentValue::Integer(7));
        assert_eq!(content["m"], ElicitResultContentValue::Boolean(true));
    }

    #[test]
    fn defaults_fill_empty_answers_and_optional_fields_can_be_left_out() {
        let input = "a\n\nann@x.org\n\n\n1\n\n";
        let (result, shown) = run_form(order_schema(), input);
        let content = result.content.unwrap();
        assert!(!content.contains_key("colour"), "optional, left out: {content:?}");
        assert_eq!(content["gift"], ElicitResultContentValue::Boolean(false));
        assert_eq!(content["quantity"], ElicitResultContentValue::Integer(1));
        assert!(shown.contains("optional: press Enter to leave it out"), "{shown}");
    }

    #[test]
    fn a_required_field_is_asked_again_and_decline_and_cancel_are_answers() {
        let (result, shown) = run_form(
            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
            "\n\nAnn\nd\n",
        );
        assert_eq!(result.action, ElicitAction::Decline);
        assert!(result.content.is_none());
        assert!(shown.contains("required: an answer is needed"), "{shown}");
        let (result, _) = run_form(order_schema(), "d\n");
        assert_eq!(result.action, ElicitAction::Decline);
        let (result, _) = run_form(order_schema(), "c\n");
        assert_eq!(result.action, ElicitAction::Cancel);
        // The end of input cancels, wherever it comes.
        let (result, _) = run_form(order_schema(), "\n1\n");
        assert_eq!(result.action, ElicitAction::Cancel);
    }

    #[test]
    fn answers_are_typed_by_the_field() {
        let number = Field::new("x", &json!({"type": "number", "maximum": 2.5}), true);
        assert_eq!(number.parse("2.5"), Ok(Some(ElicitResultContentValue::Number(2.5))));
        assert_eq!(number.parse("3"), Err("at most 2.5".into()));
        assert!(number.parse("NaN").is_err());
        let choice = Field::new("c", &json!({"type": "string", "oneOf": [{"const": "a", "title": "Alpha"}]}), false);
        assert_eq!(choice.parse("Alpha"), Ok(Some(ElicitResultContentValue::String("a".into()))));
        assert_eq!(choice.parse("1"), Ok(Some(ElicitResultContentValue::String("a".into()))));
        assert!(choice.parse("2").is_err());
        assert_eq!(choice.parse("-"), Ok(None));
        let text = Field::new("t", &json!({"type": "string", "minLength": 2, "maxLength": 3}), true);
        assert!(text.parse("a").is_err() && text.parse("abcd").is_err());
        let date = Field::new("d", &json!({"type": "string", "format": "date"}), true);
        assert!(date.parse("2026-11-25").is_ok() && date.parse("2026-13-01").is_err());
        let multi = Field::new("m", &json!({"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 1}), true);
        assert!(multi.parse("1,2").is_err());
    }

    #[test]
    fn a_prompt_runs_inside_around_once() {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let seen = calls.clone();
        let around: Around = Arc::new(move |f| {
            seen.lock().unwrap().push("hide");
            f();
            f();
            seen.lock().unwrap().push("show");
        });
        let inner = calls.clone();
        let out = run_around(Some(&around), || inner.lock().unwrap().push("ask"));
        assert_eq!(out, Some(()));
        assert_eq!(*calls.lock().unwrap(), ["hide", "ask", "show"]);
        assert_eq!(run_around(None, || 7), Some(7));
        let lazy: Around = Arc::new(|_| {});
        assert_eq!(run_around(Some(&lazy), || 7), None);
    }

    #[test]
    fn lines_are_read_with_a_bound() {
        let long = format!("{}\nnext\n", "x".repeat(100));
        let mut reader = std::io::BufReader::with_capacity(8, long.as_bytes());
        assert_eq!(read_line_bounded(&mut reader, 10).unwrap(), Some(Err(())));
        assert_eq!(read_line_bounded(&mut reader, 10).unwrap(), Some(Ok("next".into())));
        assert_eq!(read_line_bounded(&mut reader, 10).unwrap(), None);
        let mut crlf = "yes\r\n".as_bytes();
        assert_eq!(read_line_bounded(&mut crlf, 10).unwrap(), Some(Ok("yes".into())));
    }

    #[test]
    fn sampling_shows_the_request_and_reads_the_reply() {
        let params: CreateMessageRequestParams = serde_json::from_value(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "What is 2+2?"}}],
            "systemPrompt": "Be brief.", "maxTokens": 50,
            "tools": [{"name": "calc", "description": "A calculator", "inputSchema": {"type": "object"}}]
        }))
        .unwrap();
        let mut out = Vec::new();
        let answer = Prompter::new("4\n".as_bytes(), &mut out, false).sample(&params).unwrap().unwrap();
        let shown = String::from_utf8(out).unwrap();
        for expected in
            ["at most 50 tokens", "  system: Be brief.", "  user: What is 2+2?", "  tool offered: calc: A calculator"]
        {
            assert!(shown.contains(expected), "{expected:?} not in:\n{shown}");
        }
        assert_eq!(serde_json::to_value(&answer.content).unwrap(), json!({"type": "text", "text": "4"}));
        let mut out = Vec::new();
        let declined = Prompter::new("\n".as_bytes(), &mut out, false).sample(&params).unwrap();
        assert_eq!(declined.unwrap_err().message, "declined by the user");
    }
}
