//! Parsing untrusted HTML within bounds. A hostile page can make a standard HTML parser build far
//! more nodes than it has bytes (formatting elements re-opened in every paragraph: 1,000 nodes per
//! `</p><p>x`) or spend quadratic time (deeply nested elements). Here the parser's tree sink counts
//! what it builds and, past a cap, the time budget or a stop request, stops building: every later
//! node is a throw-away handle that is never stored, and the input stops being fed.

use std::borrow::Cow;
use std::cell::{Cell, Ref};
use std::fmt;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ego_tree::NodeId;
use html5ever::driver::{self, ParseOpts};
use html5ever::tendril::{StrTendril, TendrilSink};
use html5ever::tree_builder::{ElemName, ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::{Attribute, LocalName, Namespace, QualName};
use scraper::{Html, HtmlTreeSink};

/// Nodes (elements, text runs, comments, ...) built before the parse is cut.
pub const DEFAULT_MAX_NODES: usize = 200_000;
/// Elements nested deeper than this cut the parse (real pages stay far below).
pub const DEFAULT_MAX_DEPTH: usize = 512;
/// Bytes of attributes (names and values, counted per element built) before the parse is cut:
/// re-opened formatting elements copy their attributes, and `class` becomes one atom per name.
pub const DEFAULT_MAX_ATTRIBUTE_BYTES: usize = 16 * 1024 * 1024;
/// Time a parse may take before it is cut.
pub const DEFAULT_PARSE_BUDGET: Duration = Duration::from_secs(5);

/// The input is fed to the parser in pieces of this many bytes, and the budget and the stop flag
/// are checked between pieces. Small, so a piece's work stays short even when the parser's own
/// bookkeeping (its stack of open elements) is large.
const PIECE_BYTES: usize = 1024;
/// The clock and the stop flag are also read every this many nodes built.
const CHECK_EVERY: usize = 256;

/// How much work one parse may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseLimits {
    /// At most this many nodes are built.
    pub max_nodes: usize,
    /// Elements are nested at most this deep.
    pub max_depth: usize,
    /// At most this many bytes of attributes are stored.
    pub max_attribute_bytes: usize,
    /// The parse stops after this long.
    pub budget: Duration,
}

impl Default for ParseLimits {
    fn default() -> Self {
        Self {
            max_nodes: DEFAULT_MAX_NODES,
            max_depth: DEFAULT_MAX_DEPTH,
            max_attribute_bytes: DEFAULT_MAX_ATTRIBUTE_BYTES,
            budget: DEFAULT_PARSE_BUDGET,
        }
    }
}

/// Why a parse stopped before the end of the page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// More nodes than the cap.
    Nodes(usize),
    /// Elements nested deeper than the cap.
    Depth(usize),
    /// More attribute bytes than the cap.
    AttributeBytes(usize),
    /// The time budget ran out.
    Time(Duration),
    /// The caller asked it to stop (the call was interrupted).
    Stopped,
}

impl fmt::Display for Cut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Nodes(n) => write!(f, "the page has more than {n} HTML nodes"),
            Self::Depth(n) => write!(f, "the page nests elements more than {n} deep"),
            Self::AttributeBytes(n) => {
                write!(f, "the page's attributes exceed {} KB", n / 1024)
            }
            Self::Time(t) => write!(
                f,
                "parsing the page took longer than {:.1} s",
                t.as_secs_f64()
            ),
            Self::Stopped => write!(f, "parsing was interrupted"),
        }
    }
}

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

/// A node handle: a node stored in the tree, or one the parser asked for after the parse was cut,
/// which is never stored (it keeps its name, and an identity, so the parser runs on unchanged).
#[derive(Clone, Debug)]
enum Handle {
    Kept(NodeId),
    Dropped(Rc<DroppedNode>),
}

#[derive(Debug)]
struct DroppedNode {
    id: u64,
    name: QualName,
}

/// An element's name, borrowed from the tree or from a dropped handle.
#[derive(Debug)]
enum Name<'a> {
    Kept(Ref<'a, QualName>),
    Dropped(&'a QualName),
}

impl ElemName for Name<'_> {
    fn ns(&self) -> &Namespace {
        match self {
            Self::Kept(name) => &name.ns,
            Self::Dropped(name) => &name.ns,
        }
    }

    fn local_name(&self) -> &LocalName {
        match self {
            Self::Kept(name) => &name.local,
            Self::Dropped(name) => &name.local,
        }
    }
}

/// scraper's sink, counting what it builds and frozen once the parse is cut: after that nothing is
/// built or moved, so the tree is what was built up to the cut.
struct BoundedSink<'s> {
    inner: HtmlTreeSink,
    limits: ParseLimits,
    deadline: Instant,
    stop: &'s AtomicBool,
    built: Cell<usize>,
    attribute_bytes: Cell<usize>,
    dropped: Cell<u64>,
    cut: Cell<Option<Cut>>,
}

impl<'s> BoundedSink<'s> {
    fn new(limits: ParseLimits, stop: &'s AtomicBool) -> Self {
        let now = Instant::now();
        Self {
            inner: HtmlTreeSink::new(Html::new_document()),
            limits,
            deadline: now.checked_add(limits.budget).unwrap_or(now),
            stop,
            built: Cell::new(0),
            attribute_bytes: Cell::new(0),
            dropped: Cell::new(0),
            cut: Cell::new(None),
        }
    }

    fn frozen(&self) -> bool {
        self.cut.get().is_some()
    }

    fn freeze(&self, why: Cut) {
        if !self.frozen() {
            self.cut.set(Some(why));
        }
    }

    /// Reads the stop flag and the clock; whether the parse may go on.
    fn keep_going(&self) -> bool {
        if self.stop.load(Ordering::Relaxed) {
            self.freeze(Cut::Stopped);
        } else if Instant::now() >= self.deadline {
            self.freeze(Cut::Time(self.limits.budget));
        }
        !self.frozen()
    }

    /// Counts one more node carrying `bytes` of attributes; whether it may be built.
    fn admit(&self, bytes: usize) -> bool {
        if self.frozen() {
            return false;
        }
        let built = self.built.get() + 1;
        self.built.set(built);
        let bytes = self.attribute_bytes.get().saturating_add(bytes);
        self.attribute_bytes.set(bytes);
        if built > self.limits.max_nodes {
            self.freeze(Cut::Nodes(self.limits.max_nodes));
        } else if bytes > self.limits.max_attribute_bytes {
            self.freeze(Cut::AttributeBytes(self.limits.max_attribute_bytes));
        } else if built.is_multiple_of(CHECK_EVERY) {
            self.keep_going();
        }
        !self.frozen()
    }

    fn dropped(&self, name: QualName) -> Handle {
        let id = self.dropped.get() + 1;
        self.dropped.set(id);
        Handle::Dropped(Rc::new(DroppedNode { id, name }))
    }

    /// A dropped handle for a node that is not an element (its name is never asked for).
    fn dropped_other(&self) -> Handle {
        self.dropped(QualName::new(
            None,
            Namespace::from(""),
            LocalName::from(""),
        ))
    }

    /// How deep `id` is (the document is 0), counting no further than the depth cap.
    fn depth(&self, id: NodeId) -> usize {
        let html = self.inner.0.borrow();
        html.tree.get(id).map_or(0, |node| {
            node.ancestors()
                .take(self.limits.max_depth.saturating_add(1))
                .count()
        })
    }

    /// Whether a node may go at `depth`; freezes the parse if not.
    fn admit_depth(&self, depth: usize) -> bool {
        if depth > self.limits.max_depth {
            self.freeze(Cut::Depth(self.limits.max_depth));
        }
        !self.frozen()
    }

    fn has_parent(&self, id: NodeId) -> bool {
        let html = self.inner.0.borrow();
        html.tree.get(id).is_some_and(|n| n.parent().is_some())
    }

    /// Whether text appended to `id` joins its last child (no new node).
    fn last_child_is_text(&self, id: NodeId) -> bool {
        let html = self.inner.0.borrow();
        let last = html.tree.get(id).and_then(|n| n.last_child());
        last.is_some_and(|n| n.value().is_text())
    }

    /// Whether text inserted before `id` joins its previous sibling (no new node).
    fn previous_is_text(&self, id: NodeId) -> bool {
        let html = self.inner.0.borrow();
        let previous = html.tree.get(id).and_then(|n| n.prev_sibling());
        previous.is_some_and(|n| n.value().is_text())
    }
}

/// A child to insert, if it is stored (text always is).
fn kept_child(child: NodeOrText<Handle>) -> Option<NodeOrText<NodeId>> {
    match child {
        NodeOrText::AppendNode(Handle::Kept(id)) => Some(NodeOrText::AppendNode(id)),
        NodeOrText::AppendNode(Handle::Dropped(_)) => None,
        NodeOrText::AppendText(text) => Some(NodeOrText::AppendText(text)),
    }
}

impl<'s> TreeSink for BoundedSink<'s> {
    type Handle = Handle;
    type Output = (Html, Option<Cut>);
    type ElemName<'a>
        = Name<'a>
    where
        Self: 'a;

    fn finish(self) -> Self::Output {
        let cut = self.cut.get();
        (self.inner.finish(), cut)
    }

    // Parse errors are not kept: a hostile page can produce one per byte.
    fn parse_error(&self, _msg: Cow<'static, str>) {}

    fn get_document(&self) -> Handle {
        Handle::Kept(self.inner.get_document())
    }

    fn elem_name<'a>(&'a self, target: &'a Handle) -> Name<'a> {
        match target {
            Handle::Kept(id) => Name::Kept(self.inner.elem_name(id)),
            Handle::Dropped(node) => Name::Dropped(&node.name),
        }
    }

    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, flags: ElementFlags) -> Handle {
        let bytes = attrs
            .iter()
            .map(|a| a.name.local.len() + a.value.len())
            .sum();
        if self.admit(bytes) {
            Handle::Kept(self.inner.create_element(name, attrs, flags))
        } else {
            self.dropped(name)
        }
    }

    fn create_comment(&self, text: StrTendril) -> Handle {
        if self.admit(0) {
            Handle::Kept(self.inner.create_comment(text))
        } else {
            self.dropped_other()
        }
    }

    fn create_pi(&self, target: StrTendril, data: StrTendril) -> Handle {
        if self.admit(0) {
            Handle::Kept(self.inner.create_pi(target, data))
        } else {
            self.dropped_other()
        }
    }

    fn append(&self, parent: &Handle, child: NodeOrText<Handle>) {
        let (Handle::Kept(parent), Some(child)) = (parent, kept_child(child)) else {
            return;
        };
        if self.frozen() {
            return;
        }
        let admitted = match child {
            NodeOrText::AppendNode(_) => self.admit_depth(self.depth(*parent) + 1),
            NodeOrText::AppendText(_) => self.last_child_is_text(*parent) || self.admit(0),
        };
        if admitted {
            self.inner.append(parent, child);
        }
    }

    fn append_based_on_parent_node(
        &self,
        element: &Handle,
        prev_element: &Handle,
        child: NodeOrText<Handle>,
    ) {
        // As scraper's sink does, but through this sink's own checks.
        match element {
            Handle::Kept(id) if self.has_parent(*id) => self.append_before_sibling(element, child),
            Handle::Kept(_) => self.append(prev_element, child),
            Handle::Dropped(_) => {}
        }
    }

    fn append_doctype_to_document(
        &self,
        name: StrTendril,
        public_id: StrTendril,
        system_id: StrTendril,
    ) {
        if self.admit(0) {
            self.inner
                .append_doctype_to_document(name, public_id, system_id);
        }
    }

    fn get_template_contents(&self, target: &Handle) -> Handle {
        match target {
            Handle::Kept(id) => Handle::Kept(self.inner.get_template_contents(id)),
            Handle::Dropped(_) => self.dropped_other(),
        }
    }

    fn same_node(&self, x: &Handle, y: &Handle) -> bool {
        match (x, y) {
            (Handle::Kept(a), Handle::Kept(b)) => a == b,
            (Handle::Dropped(a), Handle::Dropped(b)) => a.id == b.id,
            _ => false,
        }
    }

    fn set_quirks_mode(&self, mode: QuirksMode) {
        self.inner.set_quirks_mode(mode);
    }

    fn append_before_sibling(&self, sibling: &Handle, new_node: NodeOrText<Handle>) {
        let (Handle::Kept(sibling), Some(new_node)) = (sibling, kept_child(new_node)) else {
            return;
        };
        if self.frozen() {
            return;
        }
        let admitted = match new_node {
            NodeOrText::AppendNode(_) => self.admit_depth(self.depth(*sibling)),
            NodeOrText::AppendText(_) => self.previous_is_text(*sibling) || self.admit(0),
        };
        if admitted {
            self.inner.append_before_sibling(sibling, new_node);
        }
    }

    fn add_attrs_if_missing(&self, target: &Handle, attrs: Vec<Attribute>) {
        if let Handle::Kept(id) = target
            && !self.frozen()
        {
            self.inner.add_attrs_if_missing(id, attrs);
        }
    }

    fn remove_from_parent(&self, target: &Handle) {
        if let Handle::Kept(id) = target
            && !self.frozen()
        {
            self.inner.remove_from_parent(id);
        }
    }

    fn reparent_children(&self, node: &Handle, new_parent: &Handle) {
        if let (Handle::Kept(node), Handle::Kept(new_parent)) = (node, new_parent)
            && !self.frozen()
        {
            self.inner.reparent_children(node, new_parent);
        }
    }
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn the_depth_cap_stops_building() {
        let page = "<div>".repeat(5000);
        let (html, cut) = parse_document(&page, &ParseLimits::default(), &never());
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
            ..ParseLimits::default()
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
        let (html, cut) = parse_document(&page, &ParseLimits::default(), &never());
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
