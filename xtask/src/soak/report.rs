//! The soak's outputs: every sample as CSV, and a hand-written SVG plot of each server's
//! resident memory over time, the warm-up shaded.

use std::fmt::Write as _;

use super::sample::Watched;

/// `t_s,server,rss_kib,fds,threads,tasks`, one line per sample.
pub fn csv(watched: &[Watched]) -> String {
    let mut out = String::from("t_s,server,rss_kib,fds,threads,tasks\n");
    for w in watched {
        for s in &w.samples {
            let _ = writeln!(out, "{:.1},{},{},{},{},{}", s.t, w.name, s.rss_kib, s.fds, s.threads, s.tasks);
        }
    }
    out
}

const COLOURS: [&str; 4] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"];
const W: f64 = 900.0;
const H: f64 = 420.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;

/// Resident memory (MiB) over time (minutes), one line per server; the warm-up shaded.
pub fn svg(watched: &[Watched], warmup: f64, title: &str) -> String {
    let t_max = watched.iter().flat_map(|w| w.samples.last()).map(|s| s.t).fold(1.0, f64::max);
    let mib = |kib: u64| kib as f64 / 1024.0;
    let y_max = watched.iter().flat_map(|w| &w.samples).map(|s| mib(s.rss_kib)).fold(1.0, f64::max) * 1.1;
    let x = |t: f64| LEFT + t / t_max * (W - LEFT - RIGHT);
    let y = |m: f64| H - BOTTOM - m / y_max * (H - TOP - BOTTOM);
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(out, r#"<text x="{LEFT}" y="20" font-size="14">{}</text>"#, escape(title));
    let _ = writeln!(
        out,
        r##"<rect x="{LEFT}" y="{TOP}" width="{:.1}" height="{:.1}" fill="#eeeeee"/>"##,
        x(warmup.min(t_max)) - LEFT,
        H - TOP - BOTTOM
    );
    axes(&mut out, t_max, y_max, x, y);
    for (i, w) in watched.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let points: Vec<String> = w.samples.iter().map(|s| format!("{:.1},{:.1}", x(s.t), y(mib(s.rss_kib)))).collect();
        let _ = writeln!(
            out,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{}"/>"#,
            points.join(" ")
        );
        let ly = TOP + 16.0 * (i as f64 + 1.0);
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{ly:.1}" fill="{colour}">{}</text>"#,
            W - RIGHT - 200.0,
            escape(w.name)
        );
    }
    out.push_str("</svg>\n");
    out
}

/// The axes, their ticks and labels.
fn axes(out: &mut String, t_max: f64, y_max: f64, x: impl Fn(f64) -> f64, y: impl Fn(f64) -> f64) {
    let (x0, y0) = (x(0.0), y(0.0));
    let _ = writeln!(out, r#"<line x1="{x0}" y1="{y0}" x2="{:.1}" y2="{y0}" stroke="black"/>"#, x(t_max));
    let _ = writeln!(out, r#"<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{:.1}" stroke="black"/>"#, y(y_max));
    for i in 0..=5 {
        let (t, m) = (t_max * i as f64 / 5.0, y_max * i as f64 / 5.0);
        let _ =
            writeln!(out, r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{:.1}</text>"#, x(t), y0 + 18.0, t / 60.0);
        let _ = writeln!(out, r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{m:.1}</text>"#, x0 - 6.0, y(m) + 4.0);
        let _ = writeln!(
            out,
            r##"<line x1="{x0}" y1="{0:.1}" x2="{1:.1}" y2="{0:.1}" stroke="#dddddd"/>"##,
            y(m),
            x(t_max)
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">minutes (warm-up shaded)</text>"#,
        x(t_max / 2.0),
        H - 10.0
    );
    let _ = writeln!(
        out,
        r#"<text x="16" y="{:.1}" transform="rotate(-90 16 {:.1})" text-anchor="middle">resident memory, MiB</text>"#,
        y(y_max / 2.0),
        y(y_max / 2.0)
    );
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::soak::sample::Sample;

    #[test]
    fn the_csv_and_the_plot_hold_every_sample() {
        let mut w = Watched::new("http", 1);
        for i in 0..3 {
            w.samples.push(Sample { t: i as f64, rss_kib: 1024 * (10 + i), fds: 9, threads: 3, tasks: 5 });
        }
        let csv = csv(std::slice::from_ref(&w));
        assert_eq!(csv.lines().count(), 4);
        assert!(csv.contains("2.0,http,12288,9,3,5"), "{csv}");
        let svg = svg(&[w], 1.0, "soak <1 min>");
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<polyline").count(), 1);
        assert!(svg.contains("soak &lt;1 min&gt;"));
    }
}
