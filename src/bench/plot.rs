//! Standalone SVG rendering of the `rigid-crowd bench` throughput plot:
//! body-steps per second against bodies, log-log, one line per backend.

use std::fmt::Write;

/// One line on the plot: a backend/configuration and its measured points.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend text, e.g. "gpu (fuse 8, llvmpipe)".
    pub label: String,
    /// (bodies, body-steps per second) pairs, in any order.
    pub points: Vec<(f64, f64)>,
}

/// Okabe-Ito palette, ordered so the low-contrast yellow comes last.
const PALETTE: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
];
const PLOT_LEFT: f64 = 80.0;
const PLOT_TOP: f64 = 50.0;
const PLOT_RIGHT: f64 = PLOT_LEFT + 560.0;
const PLOT_BOTTOM: f64 = PLOT_TOP + 360.0;
const LEGEND_LEFT: f64 = PLOT_RIGHT + 20.0;
const LEGEND_ROW: f64 = 20.0;
/// Rough advance of one character at font-size 12, used to size the legend.
const CHAR_WIDTH: f64 = 7.0;
/// Beyond this many decades, ticking every one would crowd the axis.
const MAX_DECADE_LABELS: i32 = 12;
const PLOT_CENTRE_X: f64 = (PLOT_LEFT + PLOT_RIGHT) / 2.0;
const PLOT_CENTRE_Y: f64 = (PLOT_TOP + PLOT_BOTTOM) / 2.0;
const MIDDLE: &str = r#"text-anchor="middle""#;
const TICK: &str = r#"stroke="black""#;
const GRID: &str = r##"stroke="#ddd""##;
const TITLE: &str = r#"text-anchor="middle" font-size="16""#;
const FRAME: &str = r#"fill="none" stroke="black""#;
const LEGEND_BOX: &str = r##"fill="white" stroke="#999""##;

/// Maps a positive value onto a pixel range by its log10, over whole decades.
struct LogAxis {
    low_decade: i32,
    high_decade: i32,
    pixel_at_low: f64,
    pixel_at_high: f64,
}

impl LogAxis {
    fn covering(values: impl Iterator<Item = f64>, pixel_at_low: f64, pixel_at_high: f64) -> Self {
        let (min, max) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v.log10()), hi.max(v.log10()))
        });
        let low_decade = min.floor() as i32;
        // At least one decade, so the axis never has zero length.
        let high_decade = (max.ceil() as i32).max(low_decade + 1);
        Self {
            low_decade,
            high_decade,
            pixel_at_low,
            pixel_at_high,
        }
    }

    fn log_pixel(&self, log_value: f64) -> f64 {
        let span = f64::from(self.high_decade - self.low_decade);
        let fraction = ((log_value - f64::from(self.low_decade)) / span).clamp(0.0, 1.0);
        self.pixel_at_low + fraction * (self.pixel_at_high - self.pixel_at_low)
    }

    fn pixel(&self, value: f64) -> f64 {
        self.log_pixel(value.log10())
    }

    /// Every decade, or every n-th one when there are too many to label legibly.
    fn decade_ticks(&self) -> Vec<i32> {
        let count = self.high_decade - self.low_decade;
        let every = (count + MAX_DECADE_LABELS - 1) / MAX_DECADE_LABELS;
        let decades = self.low_decade..=self.high_decade;
        decades.step_by(every as usize).collect()
    }

    /// Pixels of 2..9 × each decade, only while decades are wide enough to show them.
    fn minor_tick_pixels(&self) -> Vec<f64> {
        if self.high_decade - self.low_decade > MAX_DECADE_LABELS {
            return Vec::new();
        }
        let minor = |decade: i32| (2..10).map(move |k| f64::from(decade) + f64::from(k).log10());
        let decades = self.low_decade..self.high_decade;
        let pixel = |log| self.log_pixel(log);
        decades.flat_map(minor).map(pixel).collect()
    }
}

/// Only finite, positive coordinates exist on a log axis.
fn plottable_sorted(series: &Series) -> Vec<(f64, f64)> {
    let plottable = |&(x, y): &(f64, f64)| x.is_finite() && y.is_finite() && x > 0.0 && y > 0.0;
    let mut points: Vec<_> = series.points.iter().copied().filter(plottable).collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    points
}

fn escape_xml(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            _ => escaped.push(c),
        }
    }
    escaped
}

/// At most two decimals, trailing zeros dropped, to keep the file small.
fn num(value: f64) -> String {
    let text = format!("{value:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" { "0" } else { text }.to_string()
}

// Writing to a String cannot fail, so the fmt::Result below is ignored.
fn text(out: &mut String, (x, y): (f64, f64), style: &str, content: &str) {
    let (x, y, content) = (num(x), num(y), escape_xml(content));
    let _ = writeln!(out, r#"<text x="{x}" y="{y}" {style}>{content}</text>"#);
}

fn line(out: &mut String, (x1, y1): (f64, f64), (x2, y2): (f64, f64), style: &str) {
    let (x1, y1, x2, y2) = (num(x1), num(y1), num(x2), num(y2));
    let _ = writeln!(out, r#"<path d="M{x1},{y1}L{x2},{y2}" {style}/>"#);
}

fn rect(out: &mut String, (x, y): (f64, f64), (width, height): (f64, f64), style: &str) {
    let (x, y, w, h) = (num(x), num(y), num(width), num(height));
    let _ = writeln!(
        out,
        r#"<rect x="{x}" y="{y}" width="{w}" height="{h}" {style}/>"#
    );
}

fn coordinate((x, y): (f64, f64)) -> String {
    format!("{},{}", num(x), num(y))
}

fn marker(out: &mut String, (x, y): (f64, f64), colour: &str) {
    let (x, y) = (num(x), num(y));
    let _ = writeln!(out, r#"<circle cx="{x}" cy="{y}" r="3" fill="{colour}"/>"#);
}

/// A log-log plot of body-steps/s against bodies, one polyline with point markers per series.
pub fn throughput_svg(title: &str, series: &[Series]) -> String {
    log_log_svg(title, ("bodies", "body-steps per second"), series)
}

/// A log-log plot of `series` under `title` with axes labelled `(x, y)`, one polyline with
/// point markers per series; points not positive and finite on both axes are left out.
pub fn log_log_svg(title: &str, (x_label, y_label): (&str, &str), series: &[Series]) -> String {
    let plotted: Vec<Vec<(f64, f64)>> = series.iter().map(plottable_sorted).collect();
    let label_lengths = series.iter().map(|s| s.label.chars().count());
    let legend_size = (
        40.0 + CHAR_WIDTH * label_lengths.max().unwrap_or(0) as f64,
        10.0 + LEGEND_ROW * series.len() as f64,
    );
    let title_width = 20.0 + 9.0 * title.chars().count() as f64;
    let width = (LEGEND_LEFT + legend_size.0 + 10.0).max(title_width);
    let height = (PLOT_BOTTOM + 60.0).max(PLOT_TOP + legend_size.1 + 10.0);

    let mut out = String::new();
    let (w, h) = (num(width), num(height));
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    out.push_str("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    text(&mut out, (width / 2.0, 28.0), TITLE, title);
    let x_label_at = (PLOT_CENTRE_X, PLOT_BOTTOM + 45.0);
    text(&mut out, x_label_at, MIDDLE, x_label);
    let y_label_at = (22.0, PLOT_CENTRE_Y);
    let rotated = format!(r#"{MIDDLE} transform="rotate(-90 22 {PLOT_CENTRE_Y})""#);
    text(&mut out, y_label_at, &rotated, y_label);

    let all_points = || plotted.iter().flatten();
    let axes = all_points().next().is_some().then(|| {
        let x_axis = LogAxis::covering(all_points().map(|p| p.0), PLOT_LEFT, PLOT_RIGHT);
        let y_axis = LogAxis::covering(all_points().map(|p| p.1), PLOT_BOTTOM, PLOT_TOP);
        (x_axis, y_axis)
    });
    // Grid first, then frame, then data, so each layer stays visible over the one before.
    if let Some((x_axis, y_axis)) = &axes {
        draw_grid(&mut out, x_axis, y_axis);
    }
    let frame = (PLOT_RIGHT - PLOT_LEFT, PLOT_BOTTOM - PLOT_TOP);
    rect(&mut out, (PLOT_LEFT, PLOT_TOP), frame, FRAME);
    match &axes {
        Some((x_axis, y_axis)) => draw_series(&mut out, &plotted, x_axis, y_axis),
        None => text(&mut out, (PLOT_CENTRE_X, PLOT_CENTRE_Y), MIDDLE, "no data"),
    }
    if !series.is_empty() {
        draw_legend(&mut out, series, legend_size);
    }
    out.push_str("</svg>\n");
    out
}

fn draw_series(out: &mut String, plotted: &[Vec<(f64, f64)>], x_axis: &LogAxis, y_axis: &LogAxis) {
    for (index, points) in plotted.iter().enumerate().filter(|(_, p)| !p.is_empty()) {
        let colour = PALETTE[index % PALETTE.len()];
        let to_pixel = |&(x, y): &(f64, f64)| (x_axis.pixel(x), y_axis.pixel(y));
        let pixels: Vec<_> = points.iter().map(to_pixel).collect();
        let coords: Vec<_> = pixels.iter().copied().map(coordinate).collect();
        let coords = coords.join(" ");
        let _ = writeln!(
            out,
            r#"<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"/>"#
        );
        for &pixel in &pixels {
            marker(out, pixel, colour);
        }
    }
}

fn draw_grid(out: &mut String, x_axis: &LogAxis, y_axis: &LogAxis) {
    for x in x_axis.minor_tick_pixels() {
        line(out, (x, PLOT_BOTTOM), (x, PLOT_BOTTOM - 4.0), TICK);
    }
    for y in y_axis.minor_tick_pixels() {
        line(out, (PLOT_LEFT, y), (PLOT_LEFT + 4.0, y), TICK);
    }
    for decade in x_axis.decade_ticks() {
        let x = x_axis.log_pixel(f64::from(decade));
        line(out, (x, PLOT_TOP), (x, PLOT_BOTTOM), GRID);
        line(out, (x, PLOT_BOTTOM), (x, PLOT_BOTTOM - 8.0), TICK);
        text(out, (x, PLOT_BOTTOM + 18.0), MIDDLE, &format!("1e{decade}"));
    }
    for decade in y_axis.decade_ticks() {
        let y = y_axis.log_pixel(f64::from(decade));
        line(out, (PLOT_LEFT, y), (PLOT_RIGHT, y), GRID);
        line(out, (PLOT_LEFT, y), (PLOT_LEFT + 8.0, y), TICK);
        let end = r#"text-anchor="end""#;
        text(out, (PLOT_LEFT - 6.0, y + 4.0), end, &format!("1e{decade}"));
    }
}

fn draw_legend(out: &mut String, series: &[Series], size: (f64, f64)) {
    let left = LEGEND_LEFT;
    rect(out, (left, PLOT_TOP), size, LEGEND_BOX);
    for (index, entry) in series.iter().enumerate() {
        let colour = PALETTE[index % PALETTE.len()];
        let row = PLOT_TOP + 15.0 + LEGEND_ROW * index as f64;
        let swatch = format!(r#"stroke="{colour}" stroke-width="2""#);
        line(out, (left + 6.0, row), (left + 26.0, row), &swatch);
        marker(out, (left + 16.0, row), colour);
        text(out, (left + 32.0, row + 4.0), "", &entry.label);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(label: &str, points: &[(f64, f64)]) -> Series {
        let (label, points) = (label.to_string(), points.to_vec());
        Series { label, points }
    }

    fn view_box(svg: &str) -> (f64, f64) {
        let rest = svg.split_once(r#"viewBox="0 0 "#).expect("viewBox").1;
        let (width, rest) = rest.split_once(' ').unwrap();
        let height = rest.split_once('"').unwrap().0;
        (width.parse().unwrap(), height.parse().unwrap())
    }

    fn polyline_points(svg: &str) -> Vec<Vec<(f64, f64)>> {
        let attributes = svg.split("<polyline points=\"").skip(1);
        let coords = attributes.map(|rest| rest.split_once('"').unwrap().0);
        let parse = |pair: &str| {
            let (x, y) = pair.split_once(',').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        };
        coords.map(|c| c.split(' ').map(parse).collect()).collect()
    }

    /// Every `<name …>` has a matching `</name>`, in order; `<name …/>` closes itself.
    fn assert_balanced(svg: &str) {
        let mut open: Vec<&str> = Vec::new();
        for rest in svg.split('<').skip(1) {
            let tag = rest.split_once('>').unwrap().0;
            if let Some(name) = tag.strip_prefix('/') {
                assert_eq!(open.pop(), Some(name), "unbalanced </{name}>");
            } else if !tag.ends_with('/') {
                open.push(tag.split_whitespace().next().unwrap());
            }
        }
        assert!(open.is_empty(), "unclosed: {open:?}");
    }

    fn assert_valid(svg: &str) {
        assert!(svg.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg""#));
        assert!(svg.ends_with("</svg>\n"));
        assert!(svg.contains(r#"fill="white""#) && svg.contains("sans-serif"));
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
        assert_balanced(svg);
        let (width, height) = view_box(svg);
        for (x, y) in polyline_points(svg).into_iter().flatten() {
            let inside = (0.0..=width).contains(&x) && (0.0..=height).contains(&y);
            assert!(inside, "({x},{y}) outside 0 0 {width} {height}");
        }
    }

    #[test]
    fn draws_one_polyline_per_series_with_points_and_decade_labels() {
        let input = [
            series("cpu", &[(1e4, 2e6), (1e3, 5e5), (3e3, 9e5)]),
            series("gpu", &[(1e3, 1e6), (1e5, 3e7)]),
            series("broken", &[(f64::NAN, 1.0), (-5.0, 1e6), (1e3, 0.0)]),
        ];
        let svg = throughput_svg("throughput", &input);
        assert_valid(&svg);
        assert_eq!(svg.matches("<polyline").count(), 2);
        for label in ">1e3< >1e4< >1e5< >1e7< >1e8< >bodies< >broken<".split(' ') {
            assert!(svg.contains(label), "missing {label}");
        }
        assert!(svg.contains(">body-steps per second<"));
        assert!(!svg.contains(">1e2<") && !svg.contains(">1e9<"));
        let cpu_xs: Vec<f64> = polyline_points(&svg)[0].iter().map(|p| p.0).collect();
        let sorted = cpu_xs.windows(2).all(|w| w[0] < w[1]);
        assert!(sorted, "unsorted: {cpu_xs:?}");
        assert_eq!(svg.matches("<circle").count(), 5 + 3, "markers + swatches");
    }

    #[test]
    fn escapes_text() {
        let svg = throughput_svg("a<b & 'c'", &[series(r#"<&">"#, &[(10.0, 10.0)])]);
        assert_valid(&svg);
        assert!(svg.contains(">a&lt;b &amp; &apos;c&apos;<"));
        assert!(svg.contains(">&lt;&amp;&quot;&gt;<"));
        assert!(!svg.contains("a<b") && !svg.contains(r#"<&""#));
    }

    #[test]
    fn no_plottable_points_says_no_data() {
        let unplottable = series("nan", &[(f64::NAN, f64::INFINITY), (0.0, 1.0)]);
        for input in [vec![], vec![unplottable]] {
            let svg = throughput_svg("", &input);
            assert_valid(&svg);
            assert!(svg.contains(">no data<") && !svg.contains("<polyline"));
        }
    }

    #[test]
    fn survives_extreme_and_degenerate_inputs() {
        let same_x = [(100.0, 1.0), (100.0, 1e3), (100.0, 10.0)];
        let extremes = [(1e-300, 1e300), (1e300, 1e-300), (5e-324, f64::MAX)];
        let many = (0..20).map(|i| series(&"x".repeat(i * 5), &[(i as f64 + 1.0, 2.0)]));
        let cases = [
            vec![series("one", &[(5.0, 5.0)])],
            vec![series("same x", &same_x)],
            vec![series("extremes", &extremes)],
            many.collect(),
        ];
        for input in cases {
            let svg = throughput_svg("extreme", &input);
            assert_valid(&svg);
            assert_eq!(svg.matches("<polyline").count(), input.len());
            let max_tick_labels = 2 * (MAX_DECADE_LABELS as usize + 1);
            assert!(svg.matches(">1e").count() <= max_tick_labels);
        }
        let single = throughput_svg("", &[series("one", &[(5.0, 5.0)])]);
        assert!(single.contains(">1e0<") && single.contains(">1e1<"));
    }

    #[test]
    fn legend_fits_and_output_is_deterministic() {
        let long = "gpu (fuse 8, llvmpipe) with a rather long description";
        let input = [series(long, &[(1e2, 1e5)]), series("cpu", &[(1e3, 1e6)])];
        let svg = throughput_svg("bench", &input);
        assert_valid(&svg);
        let (width, _) = view_box(&svg);
        assert!(width >= LEGEND_LEFT + CHAR_WIDTH * long.len() as f64 + 32.0);
        assert_eq!(svg, throughput_svg("bench", &input));
        assert!(svg.contains(PALETTE[0]) && svg.contains(PALETTE[1]));
    }
}
