//! Parsing untrusted HTML within bounds. A hostile page can make a standard HTML parser build far
//! more nodes than it has bytes (formatting elements re-opened in every paragraph: 1,000 nodes per
//! `</p><p>x`) or spend quadratic time (deeply nested elements). Here the parser's tree sink counts
//! what it builds and, past a cap, the time budget or a stop request, stops building: every later
//! node is a throw-away handle that is never stored, and the input stops being fed.

mod limits;
mod sink;

use std::sync::atomic::AtomicBool;

use html5ever::driver::{self, ParseOpts};
use html5ever::tendril::{StrTendril, TendrilSink};
use scraper::Html;

pub use limits::{Cut, ParseLimits};
use sink::BoundedSink;

/// The input is fed to the parser in pieces of this many bytes, and the budget and the stop flag
/// are checked between pieces. Small, so a piece's work stays short even when the parser's own
/// bookkeeping (its stack of open elements) is large.
const PIECE_BYTES: usize = 1024;

/// Parses `html` as a document within `limits`; setting `stop` (from any thread) ends the parse
/// soon. Returns the tree built so far and, if the parse was cut, why. Without a cut the tree is
/// exactly what `Html::parse_document` builds.
pub fn parse_document(html: &str, limits: &ParseLimits, stop: &AtomicBool) -> (Html, Option<Cut>) {
    parse_in_pieces(html, limits, stop, PIECE_BYTES)
}

fn parse_in_pieces(
    html: &str,
    limits: &ParseLimits,
    stop: &AtomicBool,
    piece_bytes: usize,
) -> (Html, Option<Cut>) {
    let sink = BoundedSink::new(*limits, stop);
    let mut parser = driver::parse_document(sink, ParseOpts::default());
    for piece in pieces(html, piece_bytes) {
        if !parser.tokenizer.sink.sink.keep_going() {
            break;
        }
        parser.process(StrTendril::from_slice(piece));
    }
    // Ending the parse is cheap once the sink is frozen: it only closes what is open.
    parser.finish()
}

/// `text` in pieces of about `size` bytes, each ending on a character boundary.
fn pieces(text: &str, size: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut end = size.max(1).min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};

    use super::limits::{DEFAULT_MAX_DEPTH, DEFAULT_MAX_NODES};
    use super::*;

    fn never() -> AtomicBool {
        AtomicBool::new(false)
    }

    const SAMPLE: &str = "<!doctype html><html><head><title>T &amp; t</title>\
        <style>p{}</style></head><body><!-- c --><p>One <b>bold <i>both</p>after</i></b>\
        <table><tr><td>cell<div>in</table>é&eacute;\u{1F600}&#x1F600;<template><p>t</p>\
        </template><a href=x>l<a href=y>m</a><ul><li>1<li>2</ul>\r\n<pre>\n x\r\n</pre>\
        <svg><circle/></svg><select><option>o</select><?pi x?><frameset></body>";

    #[test]
    fn pieces_end_on_character_boundaries_and_cover_the_text() {
        let text = "aé\u{1F600}bc";
        for size in 1..8 {
            let parts: Vec<&str> = pieces(text, size).collect();
            assert_eq!(parts.concat(), text);
        }
    }

    #[test]
    fn an_uncut_parse_builds_the_same_tree_as_scraper() {
        let expected = Html::parse_document(SAMPLE);
        for size in [1, 2, 3, 7, 64, PIECE_BYTES] {
            let (html, cut) = parse_in_pieces(SAMPLE, &ParseLimits::default(), &never(), size);
            assert_eq!(cut, None);
            assert_eq!(html.tree, expected.tree, "pieces of {size} bytes");
        }
    }

    #[test]
    fn the_node_cap_stops_building() {
        let page = "<p>x</p>".repeat(1000);
        let limits = ParseLimits {
            max_nodes: 100,
            ..ParseLimits::default()
        };
        let (html, cut) = parse_document(&page, &limits, &never());
        assert_eq!(cut, Some(Cut::Nodes(100)));
        assert!(
            html.tree.nodes().count() < 250,
            "{}",
            html.tree.nodes().count()
        );
    }

    /// The default caps without the time budget, so a slow (debug, loaded) machine cannot make
    /// the clock stop the parse before the cap under test does.
    fn no_clock() -> ParseLimits {
        ParseLimits {
            budget: Duration::from_secs(600),
            ..ParseLimits::default()
        }
    }

    #[test]
    fn the_depth_cap_stops_building() {
        let page = "<div>".repeat(5000);
        let (html, cut) = parse_document(&page, &no_clock(), &never());
        assert_eq!(cut, Some(Cut::Depth(DEFAULT_MAX_DEPTH)));
        let deepest = html
            .tree
            .nodes()
            .map(|n| n.ancestors().count())
            .max()
            .unwrap_or(0);
        assert!(deepest <= DEFAULT_MAX_DEPTH, "{deepest}");
    }

    #[test]
    fn the_attribute_cap_stops_building() {
        let page = format!("<p><b class='{}'>", "c ".repeat(10_000)) + &"</p><p>x".repeat(1000);
        let limits = ParseLimits {
            max_attribute_bytes: 100_000,
            ..no_clock()
        };
        let (_, cut) = parse_document(&page, &limits, &never());
        assert_eq!(cut, Some(Cut::AttributeBytes(100_000)));
    }

    #[test]
    fn reopened_formatting_elements_stop_at_the_node_cap() {
        let mut page = String::from("<p>");
        for i in 0..400 {
            page.push_str(&format!("<b id={i}>"));
        }
        page.push_str(&"</p><p>x".repeat(100_000));
        let (html, cut) = parse_document(&page, &no_clock(), &never());
        assert_eq!(cut, Some(Cut::Nodes(DEFAULT_MAX_NODES)));
        // Parsed in full: 40 million nodes. (The document and the html, head and body elements
        // come on top.)
        let count = html.tree.nodes().count();
        assert!(count <= DEFAULT_MAX_NODES + 1, "{count}");
    }

    #[test]
    fn a_stop_from_another_thread_ends_an_unbounded_parse() {
        let page = "<div>".repeat(100_000);
        let unbounded = ParseLimits {
            max_nodes: usize::MAX,
            max_depth: usize::MAX,
            max_attribute_bytes: usize::MAX,
            budget: Duration::from_secs(600),
        };
        let stop = AtomicBool::new(false);
        let started = Instant::now();
        let cut = std::thread::scope(|s| {
            let parse = s.spawn(|| parse_document(&page, &unbounded, &stop).1);
            std::thread::sleep(Duration::from_millis(300));
            stop.store(true, Ordering::Relaxed);
            parse.join().ok().flatten()
        });
        assert_eq!(cut, Some(Cut::Stopped));
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn a_raised_stop_flag_or_a_spent_budget_stops_at_once() {
        let page = "<p>x</p>".repeat(1000);
        let (html, cut) = parse_document(&page, &ParseLimits::default(), &AtomicBool::new(true));
        assert_eq!(cut, Some(Cut::Stopped));
        assert_eq!(html.tree.nodes().count(), 1, "only the document");
        let limits = ParseLimits {
            budget: Duration::ZERO,
            ..ParseLimits::default()
        };
        let (_, cut) = parse_document(&page, &limits, &never());
        assert_eq!(cut, Some(Cut::Time(Duration::ZERO)));
    }
}
