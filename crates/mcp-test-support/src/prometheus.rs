//! A scrape of a `/metrics` endpoint in the Prometheus text format, read line by line: each
//! sample's name, labels and value, to assert on what a real endpoint served.

use std::collections::BTreeMap;

/// One sample: `name{labels} value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The metric's name (with its `_bucket`, `_sum` or `_count` suffix).
    pub name: String,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
    /// Its value.
    pub value: f64,
}

/// The samples of one scrape.
#[derive(Debug, Clone, Default)]
pub struct Scrape {
    /// Every sample, in the order served.
    pub samples: Vec<Sample>,
}

impl Scrape {
    /// Reads `text` (comments and blank lines skipped); panics on a line that is no sample.
    pub fn parse(text: &str) -> Scrape {
        let samples = text
            .lines()
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .map(|line| parse_sample(line).unwrap_or_else(|| panic!("not a sample line: {line:?}")))
            .collect();
        Scrape { samples }
    }

    /// The samples named `name` that carry every label of `labels`.
    pub fn matching<'a>(&'a self, name: &'a str, labels: &'a [(&str, &str)]) -> impl Iterator<Item = &'a Sample> {
        self.samples.iter().filter(move |s| {
            s.name == name && labels.iter().all(|(k, v)| s.labels.get(*k).is_some_and(|have| have == v))
        })
    }

    /// The sum of the values of [`matching`](Self::matching) samples (0 if none).
    pub fn sum(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.matching(name, labels).map(|s| s.value).sum()
    }

    /// Every value the label `label` takes on samples whose name starts with `prefix`.
    pub fn label_values(&self, prefix: &str, label: &str) -> Vec<String> {
        let mut values: Vec<String> = self
            .samples
            .iter()
            .filter(|s| s.name.starts_with(prefix))
            .filter_map(|s| s.labels.get(label).cloned())
            .collect();
        values.sort();
        values.dedup();
        values
    }
}

fn parse_sample(line: &str) -> Option<Sample> {
    let (series, value) = line.rsplit_once(' ')?;
    let value = match value {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        v => v.parse().ok()?,
    };
    let (name, labels) = match series.split_once('{') {
        None => (series, BTreeMap::new()),
        Some((name, rest)) => (name, parse_labels(rest.strip_suffix('}')?)?),
    };
    Some(Sample { name: name.to_owned(), labels, value })
}

/// `a="x",b="y"` (values with `\"`, `\\` and `\n` escapes).
fn parse_labels(mut text: &str) -> Option<BTreeMap<String, String>> {
    let mut labels = BTreeMap::new();
    while !text.is_empty() {
        let (key, rest) = text.split_once("=\"")?;
        let mut value = String::new();
        let mut chars = rest.char_indices();
        let end = loop {
            match chars.next()? {
                (i, '"') => break i,
                (_, '\\') => match chars.next()?.1 {
                    'n' => value.push('\n'),
                    c => value.push(c),
                },
                (_, c) => value.push(c),
            }
        };
        labels.insert(key.trim_start_matches(',').to_owned(), value);
        text = &rest[end + 1..];
        text = text.strip_prefix(',').unwrap_or(text);
    }
    Some(labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_samples() {
        let scrape = Scrape::parse(
            "# TYPE x counter\nx{method=\"tools/call\",i=\"a\\\"b\"} 3\ny 1.5\nh_bucket{le=\"+Inf\"} 2\n",
        );
        assert_eq!(scrape.sum("x", &[("method", "tools/call")]), 3.0);
        assert_eq!(scrape.matching("x", &[]).next().unwrap().labels["i"], "a\"b");
        assert_eq!(scrape.sum("y", &[]), 1.5);
        assert_eq!(scrape.sum("h_bucket", &[("le", "+Inf")]), 2.0);
        assert_eq!(scrape.label_values("x", "method"), ["tools/call"]);
    }
}
